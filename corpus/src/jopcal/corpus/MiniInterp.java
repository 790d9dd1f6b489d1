package jopcal.corpus;

/** A tiny stack machine interpreter: a dense tableswitch over opcodes. */
public class MiniInterp {
    static final int PUSH = 0, ADD = 1, SUB = 2, MUL = 3, DUP = 4, SWAP = 5, JNZ = 6, DEC = 7, POP = 8, HALT = 9, OVER = 10;

    static int run(int[] code, int arg) {
        int[] st = new int[32];
        int sp = 0, pc = 0, steps = 0;
        st[sp++] = arg;
        for (;;) {
            steps++;
            switch (code[pc++]) {
                case PUSH: st[sp++] = code[pc++]; break;
                case ADD: sp--; st[sp - 1] += st[sp]; break;
                case SUB: sp--; st[sp - 1] -= st[sp]; break;
                case MUL: sp--; st[sp - 1] *= st[sp]; break;
                case DUP: st[sp] = st[sp - 1]; sp++; break;
                case SWAP: { int t = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = t; break; }
                case JNZ: { int t = code[pc++]; if (st[--sp] != 0) pc = t; break; }
                case DEC: st[sp - 1]--; break;
                case POP: sp--; break;
                case OVER: st[sp] = st[sp - 2]; sp++; break;
                case HALT: return st[sp - 1] + steps;
                default: return -1;
            }
        }
    }

    public static void main(String[] args) {
        // acc = 1; n = arg; while (n != 0) { acc = acc * n + 3; n--; }
        int[] prog = { PUSH, 1, SWAP, // acc n
            DUP, JNZ, 7, HALT - 0, // placeholder fixed below
            OVER, OVER, MUL, PUSH, 3, ADD, SWAP, POP, SWAP, DEC, DUP, JNZ, 7, POP, HALT };
        prog[6] = POP; // n == 0 at start never happens for arg > 0
        int total = 0;
        for (int a = 1; a < 120; a++) total += run(prog, a % 23 + 1);
        System.out.println("total " + total);
    }
}
