package jopcal.corpus;

/** A line editor: StringBuffer insert, delete, reverse, setCharAt; String search and compare. */
public class LineEditor {
    public static void main(String[] args) {
        StringBuffer sb = new StringBuffer("the quick brown fox");
        int checks = 0;
        for (int r = 0; r < 60; r++) {
            sb.insert(4, "very ");
            sb.append(' ').append(r);
            int k = sb.toString().indexOf("fox");
            if (k >= 0) sb.setCharAt(k, 'F');
            if (sb.length() > 60) sb.delete(0, 20);
            if ((r & 3) == 0) sb.reverse();
            String s = sb.toString();
            checks += s.length() + s.lastIndexOf('e') + (s.startsWith("the") ? 1 : 0);
            checks += s.compareTo("middle") > 0 ? 2 : 3;
            checks += s.toUpperCase().hashCode() & 0xff;
            String t = s.trim().replace('o', '0');
            if (t.endsWith("0")) checks++;
            checks += t.substring(2, 9).equalsIgnoreCase("E QUICK") ? 5 : 0;
        }
        System.out.println("checks " + checks + " final " + sb.length());
    }
}
