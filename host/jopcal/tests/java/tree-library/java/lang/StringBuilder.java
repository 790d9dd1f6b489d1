package java.lang;
public final class StringBuilder {
    private char[] chars = new char[4];
    private int used;
    public StringBuilder() {
    }
    public StringBuilder(String s) {
        append(s);
    }
    public StringBuilder append(char c) {
        if (used == chars.length) {
            char[] more = new char[used * 2];
            for (int i = 0; i < used; i++) {
                more[i] = chars[i];
            }
            chars = more;
        }
        chars[used++] = c;
        return this;
    }
    public StringBuilder append(String s) {
        for (int i = 0; i < s.length(); i++) {
            append(s.charAt(i));
        }
        return this;
    }
    public StringBuilder append(int n) {
        return append(Integer.toString(n));
    }
    public String toString() {
        char[] out = new char[used];
        for (int i = 0; i < used; i++) {
            out[i] = chars[i];
        }
        return new String(out);
    }
}
