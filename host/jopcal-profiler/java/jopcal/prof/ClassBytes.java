package jopcal.prof;

import java.util.HashMap;
import java.util.Map;

/**
 * What the agent reads from a class file itself, because ASM hides it:
 * each method's original code (ASM reads iload_0 and iload 0 alike) and
 * the length of each instruction in it.
 */
final class ClassBytes {
    private ClassBytes() {}

    private static int u1(byte[] b, int i) {
        return b[i] & 0xff;
    }

    private static int u2(byte[] b, int i) {
        return (b[i] & 0xff) << 8 | (b[i + 1] & 0xff);
    }

    private static int s4(byte[] b, int i) {
        return (b[i] & 0xff) << 24 | (b[i + 1] & 0xff) << 16 | (b[i + 2] & 0xff) << 8 | (b[i + 3] & 0xff);
    }

    /** name + descriptor -> the bytes of the method's Code attribute's code. */
    static Map<String, byte[]> codes(byte[] b) {
        int count = u2(b, 8);
        int[] utf = new int[count];
        int p = 10;
        for (int i = 1; i < count; i++) {
            int tag = u1(b, p);
            switch (tag) {
                case 1:
                    utf[i] = p;
                    p += 3 + u2(b, p + 1);
                    break;
                case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18:
                    p += 5;
                    break;
                case 5: case 6:
                    p += 9;
                    i++;
                    break;
                case 7: case 8: case 16: case 19: case 20:
                    p += 3;
                    break;
                case 15:
                    p += 4;
                    break;
                default:
                    throw new IllegalStateException("constant pool tag " + tag + " at byte " + p);
            }
        }
        p += 6;
        p += 2 + 2 * u2(b, p); // interfaces
        int fields = u2(b, p);
        p += 2;
        for (int f = 0; f < fields; f++) {
            p += 6;
            int attrs = u2(b, p);
            p += 2;
            for (int a = 0; a < attrs; a++) {
                p += 6 + s4(b, p + 2);
            }
        }
        Map<String, byte[]> out = new HashMap<>();
        int methods = u2(b, p);
        p += 2;
        for (int m = 0; m < methods; m++) {
            String name = utf8(b, utf[u2(b, p + 2)]);
            String desc = utf8(b, utf[u2(b, p + 4)]);
            p += 6;
            int attrs = u2(b, p);
            p += 2;
            for (int a = 0; a < attrs; a++) {
                String an = utf8(b, utf[u2(b, p)]);
                int len = s4(b, p + 2);
                if (an.equals("Code")) {
                    int codeLen = s4(b, p + 10);
                    byte[] code = new byte[codeLen];
                    System.arraycopy(b, p + 14, code, 0, codeLen);
                    out.put(name + desc, code);
                }
                p += 6 + len;
            }
        }
        return out;
    }

    private static String utf8(byte[] b, int at) {
        int len = u2(b, at + 1);
        try {
            return new java.io.DataInputStream(new java.io.ByteArrayInputStream(b, at + 1, len + 2)).readUTF();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The opcode as ASM reports it: short and wide forms folded into one. */
    static int asAsm(int op) {
        if (op >= 0x1a && op <= 0x2d) {
            return 0x15 + (op - 0x1a) / 4; // iload_0.. -> iload, lload, fload, dload, aload
        }
        if (op >= 0x3b && op <= 0x4e) {
            return 0x36 + (op - 0x3b) / 4; // istore_0.. -> istore..astore
        }
        switch (op) {
            case 0x13: case 0x14:
                return 0x12; // ldc_w, ldc2_w
            case 0xc8:
                return 0xa7; // goto_w
            case 0xc9:
                return 0xa8; // jsr_w
            default:
                return op;
        }
    }

    /** Whether original opcode {@code op} is read by ASM as {@code asm}. */
    static boolean sameFamily(int op, int asm) {
        return asAsm(op) == asm;
    }

    /** The length of the instruction at {@code pc}. */
    static int length(byte[] code, int pc) {
        int op = code[pc] & 0xff;
        switch (op) {
            case 0xaa: { // tableswitch
                int p = (pc + 4) & ~3;
                int lo = s4(code, p + 4);
                int hi = s4(code, p + 8);
                return p - pc + 12 + 4 * (hi - lo + 1);
            }
            case 0xab: { // lookupswitch
                int p = (pc + 4) & ~3;
                int n = s4(code, p + 4);
                return p - pc + 8 + 8 * n;
            }
            case 0xc4: // wide
                return (code[pc + 1] & 0xff) == 0x84 ? 6 : 4;
            default:
                return LENGTHS[op];
        }
    }

    private static final int[] LENGTHS = new int[256];

    static {
        java.util.Arrays.fill(LENGTHS, 1);
        for (int op : new int[] {0x10, 0x12, 0x15, 0x16, 0x17, 0x18, 0x19, 0x36, 0x37, 0x38, 0x39, 0x3a, 0xa9, 0xbc}) {
            LENGTHS[op] = 2;
        }
        for (int op = 0x99; op <= 0xa8; op++) {
            LENGTHS[op] = 3;
        }
        for (int op : new int[] {0x11, 0x13, 0x14, 0x84, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xbb, 0xbd, 0xc0,
                0xc1, 0xc6, 0xc7}) {
            LENGTHS[op] = 3;
        }
        LENGTHS[0xc5] = 4; // multianewarray
        for (int op : new int[] {0xb9, 0xba, 0xc8, 0xc9}) {
            LENGTHS[op] = 5;
        }
    }
}
