package jopcal.corpus;

/**
 * Formats numbers as text and parses them back: Integer.toString, toHexString, parseInt.
 * (JOP's library parses decimal only: its Character.digit takes radix 10 alone.)
 */
public class NumberText {
    public static void main(String[] args) {
        int sum = 0;
        int chars = 0;
        for (int i = -500; i < 500; i += 3) {
            int v = i * 7919;
            String dec = Integer.toString(v);
            String hex = Integer.toHexString(v);
            chars += dec.length() + hex.length();
            sum += Integer.parseInt(dec) == v ? 1 : 0;
            sum += Integer.parseInt(Integer.toString(v & 0xffff)) & 0xff;
        }
        System.out.println(sum);
        System.out.println(chars);
    }
}
