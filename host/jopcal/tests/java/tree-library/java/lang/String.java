package java.lang;
public final class String {
    private final char[] chars;
    public String(char[] from) {
        chars = new char[from.length];
        for (int i = 0; i < from.length; i++) {
            chars[i] = from[i];
        }
    }
    public int length() {
        return chars.length;
    }
    public char charAt(int i) {
        return chars[i];
    }
    public char[] toCharArray() {
        return new String(chars).chars;
    }
    public String toString() {
        return this;
    }
}
