package jopcal.corpus;

/** Parses numbers from text, catching the bad ones: charAt past the end, bad digits. */
public class ParseNumbers {
    static int parse(String s) {
        int v = 0, i = 0;
        boolean neg = false;
        if (s.charAt(0) == '-') { neg = true; i = 1; }
        for (; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') throw new IllegalArgumentException("bad digit");
            v = v * 10 + (c - '0');
        }
        return neg ? -v : v;
    }

    public static void main(String[] args) {
        String[] inputs = {"12", "-7", "3x", "", "451", "-", "99", "0", "12a4", "-300"};
        int sum = 0, bad = 0, empty = 0;
        for (int r = 0; r < 40; r++) {
            for (int k = 0; k < inputs.length; k++) {
                try {
                    sum += parse(inputs[k]);
                } catch (IllegalArgumentException e) {
                    bad++;
                } catch (StringIndexOutOfBoundsException e) {
                    empty++;
                }
            }
        }
        System.out.println("sum " + sum + " bad " + bad + " empty " + empty);
    }
}
