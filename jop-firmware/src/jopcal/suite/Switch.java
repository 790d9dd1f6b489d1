package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/**
 * switch-heavy code: a small stack-machine interpreter whose dispatch is a
 * dense switch (tableswitch), running a program that sums the classified
 * characters of a buffer through a sparse switch (lookupswitch).
 */
public final class Switch extends Workload {
    static final int PUSH = 0;
    static final int LOAD = 1;
    static final int STORE = 2;
    static final int ADD = 3;
    static final int SUB = 4;
    static final int JNZ = 5;
    static final int CLASSIFY = 6;
    static final int DUP = 7;
    static final int HALT = 8;

    private int[] program;
    private int[] text;

    public static void main(String[] args) {
        Harness.runOne(new Switch());
    }

    public String name() {
        return "Switch";
    }

    public int iterations() {
        return 4;
    }

    public void setup() {
        // vars: 0 = i (counts down), 1 = acc
        program = new int[] {
            PUSH, 64, STORE, 0, // i = 64
            PUSH, 0, STORE, 1, // acc = 0
            // loop (pc 8):
            LOAD, 0, CLASSIFY, // class of text[i]
            LOAD, 1, ADD, STORE, 1, // acc += class
            LOAD, 0, PUSH, 1, SUB, DUP, STORE, 0, // i -= 1
            JNZ, 8,
            LOAD, 1, HALT
        };
        text = new int[65];
        String sample = "if (x == 10) { y = y + 1; } else { z = -2; } // done; ok!";
        for (int i = 0; i < text.length; i++) {
            text[i] = sample.charAt(i % sample.length());
        }
    }

    static int classify(int c) {
        switch (c) {
            case ' ':
                return 1;
            case '(':
            case ')':
                return 2;
            case '{':
            case '}':
                return 3;
            case '=':
                return 5;
            case ';':
                return 7;
            case '+':
            case '-':
                return 11;
            case '/':
                return 13;
            case '!':
                return 17;
            default:
                return c >= '0' && c <= '9' ? 19 : 23;
        }
    }

    int execute() {
        int[] stack = new int[8];
        int[] vars = new int[2];
        int sp = 0;
        int pc = 0;
        int[] code = program;
        while (true) {
            int op = code[pc++];
            switch (op) {
                case PUSH:
                    stack[sp++] = code[pc++];
                    break;
                case LOAD:
                    stack[sp++] = vars[code[pc++]];
                    break;
                case STORE:
                    vars[code[pc++]] = stack[--sp];
                    break;
                case ADD:
                    sp--;
                    stack[sp - 1] += stack[sp];
                    break;
                case SUB:
                    sp--;
                    stack[sp - 1] -= stack[sp];
                    break;
                case JNZ:
                    if (stack[--sp] != 0) {
                        pc = code[pc];
                    } else {
                        pc++;
                    }
                    break;
                case CLASSIFY:
                    stack[sp - 1] = classify(text[stack[sp - 1]]);
                    break;
                case DUP:
                    stack[sp] = stack[sp - 1];
                    sp++;
                    break;
                case HALT:
                    return stack[sp - 1];
                default:
                    return -1;
            }
        }
    }

    public int run(int iterations) {
        int sum = 0;
        for (int it = 0; it < iterations; it++) {
            sum += execute();
        }
        return sum;
    }

    /** The interpreted program classifies text[64] down to text[1]. */
    public int expected() {
        int acc = 0;
        for (int i = 64; i >= 1; i--) {
            acc += classify(text[i]);
        }
        return acc * iterations();
    }
}
