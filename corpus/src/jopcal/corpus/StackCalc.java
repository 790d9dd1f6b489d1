package jopcal.corpus;

import java.util.Stack;

/** Evaluates postfix expressions with java.util.Stack. */
public class StackCalc {
    static final String[] PROGRAMS = { "3 4 + 5 *", "10 2 8 * + 3 -", "2 3 4 * 5 6 * + *", "9 1 - 2 / 7 *",
            "1 2 + 3 + 4 + 5 + 6 +" };

    public static void main(String[] args) {
        int sum = 0;
        for (int round = 0; round < 30; round++) {
            for (int p = 0; p < PROGRAMS.length; p++) {
                sum += eval(PROGRAMS[p]) + round;
            }
        }
        System.out.println(sum);
    }

    static int eval(String prog) {
        Stack st = new Stack();
        int i = 0;
        while (i < prog.length()) {
            char c = prog.charAt(i);
            if (c >= '0' && c <= '9') {
                int v = 0;
                while (i < prog.length() && prog.charAt(i) >= '0' && prog.charAt(i) <= '9') {
                    v = v * 10 + (prog.charAt(i) - '0');
                    i++;
                }
                st.push(new Integer(v));
                continue;
            }
            if (c != ' ') {
                int b = ((Integer) st.pop()).intValue();
                int a = ((Integer) st.pop()).intValue();
                int r;
                switch (c) {
                case '+': r = a + b; break;
                case '-': r = a - b; break;
                case '*': r = a * b; break;
                default: r = a / b; break;
                }
                st.push(new Integer(r));
            }
            i++;
        }
        return ((Integer) st.pop()).intValue();
    }
}
