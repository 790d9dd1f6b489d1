package jopcal.corpus;

/** Splits a byte[] of source text into tokens with a nested switch. */
public class Tokenizer {
    static final int IDENT = 1, NUMBER = 2, OP = 3, SPACE = 4, PUNCT = 5;

    static byte[] text() {
        String s = "int x = 42; while (x > 0) { x = x - 3; y += x * 2; } return y / 7;";
        byte[] b = new byte[s.length()];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) s.charAt(i);
        }
        return b;
    }

    static int classOf(int c) {
        switch (c) {
        case ' ': case '\t': case '\n':
            return SPACE;
        case '+': case '-': case '*': case '/': case '=': case '<': case '>':
            return OP;
        case '(': case ')': case '{': case '}': case ';':
            return PUNCT;
        default:
            if (c >= '0' && c <= '9') {
                return NUMBER;
            }
            return IDENT;
        }
    }

    public static void main(String[] args) {
        byte[] src = text();
        int[] counts = new int[6];
        int weight = 0;
        for (int round = 0; round < 80; round++) {
            int state = SPACE;
            for (int i = 0; i < src.length; i++) {
                int k = classOf(src[i]);
                if (k != state || k == PUNCT) {
                    switch (k) {
                    case IDENT: counts[IDENT]++; weight += 3; break;
                    case NUMBER: counts[NUMBER]++; weight += 5; break;
                    case OP:
                        switch (src[i]) {
                        case '=': weight += 1; break;
                        case '+': case '-': weight += 2; break;
                        default: weight += 4; break;
                        }
                        counts[OP]++;
                        break;
                    case PUNCT: counts[PUNCT]++; break;
                    default: break;
                    }
                }
                state = k;
            }
        }
        System.out.println(counts[IDENT] + counts[NUMBER] * 10 + counts[OP] * 100 + counts[PUNCT] * 1000);
        System.out.println(weight);
    }
}
