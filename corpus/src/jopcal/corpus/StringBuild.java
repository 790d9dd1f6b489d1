package jopcal.corpus;

/** Builds lines of numbers in a StringBuffer and prints their total length. */
public class StringBuild {
    public static void main(String[] args) {
        int total = 0;
        int digits = 0;
        for (int line = 0; line < 60; line++) {
            StringBuffer sb = new StringBuffer();
            for (int i = 0; i < 12; i++) {
                sb.append(line * 37 + i * 1013);
                sb.append(',');
            }
            String s = sb.toString();
            total += s.length();
            for (int k = 0; k < s.length(); k++) {
                if (s.charAt(k) >= '0' && s.charAt(k) <= '9') {
                    digits++;
                }
            }
        }
        System.out.println(total);
        System.out.println(digits);
    }
}
