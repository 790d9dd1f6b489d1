package java.lang;
public final class Integer {
    public static String toString(int n) {
        if (n == 0) {
            return "0";
        }
        char[] digits = new char[11];
        int at = digits.length;
        boolean negative = n < 0;
        while (n != 0) {
            int d = n % 10;
            digits[--at] = (char) ('0' + (d < 0 ? -d : d));
            n /= 10;
        }
        if (negative) {
            digits[--at] = '-';
        }
        char[] out = new char[digits.length - at];
        for (int i = 0; i < out.length; i++) {
            out[i] = digits[at + i];
        }
        return new String(out);
    }
}
