package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/**
 * AES-128 encryption written from the FIPS-197 description: the S-box is
 * derived in setup() from the multiplicative inverse in GF(2^8) and the affine
 * transform, then used as a lookup table. Every iteration encrypts the
 * FIPS-197 appendix C.1 example block and compares it with the published
 * ciphertext 69c4e0d86a7b0430d8cdb78070b4c55a.
 */
public final class Aes extends Workload {
    private int[] sbox;
    private int[] roundKeys; // 11 round keys x 16 bytes
    private int[] plain;
    private int[] cipherExpected;
    private int[] state;

    public static void main(String[] args) {
        Harness.runOne(new Aes());
    }

    public String name() {
        return "Aes";
    }

    public int iterations() {
        return 12;
    }

    static int xtime(int b) {
        b <<= 1;
        return (b & 0x100) != 0 ? (b ^ 0x11b) : b;
    }

    static int rotl8(int b, int n) {
        return ((b << n) | (b >>> (8 - n))) & 0xff;
    }

    static int[] hex(int[] words) {
        int[] bytes = new int[words.length * 4];
        for (int i = 0; i < words.length; i++) {
            for (int k = 0; k < 4; k++) {
                bytes[i * 4 + k] = (words[i] >>> (24 - 8 * k)) & 0xff;
            }
        }
        return bytes;
    }

    public void setup() {
        // exp/log tables over the generator 0x03, then S(x) = affine(inverse(x)).
        int[] exp = new int[256];
        int[] log = new int[256];
        int p = 1;
        for (int i = 0; i < 255; i++) {
            exp[i] = p;
            log[p] = i;
            p ^= xtime(p);
        }
        sbox = new int[256];
        for (int x = 0; x < 256; x++) {
            int inv = x == 0 ? 0 : exp[(255 - log[x]) % 255];
            sbox[x] = inv ^ rotl8(inv, 1) ^ rotl8(inv, 2) ^ rotl8(inv, 3) ^ rotl8(inv, 4) ^ 0x63;
        }
        int[] key = hex(new int[] {0x00010203, 0x04050607, 0x08090a0b, 0x0c0d0e0f});
        plain = hex(new int[] {0x00112233, 0x44556677, 0x8899aabb, 0xccddeeff});
        cipherExpected = hex(new int[] {0x69c4e0d8, 0x6a7b0430, 0xd8cdb780, 0x70b4c55a});
        roundKeys = new int[176];
        for (int i = 0; i < 16; i++) {
            roundKeys[i] = key[i];
        }
        int rcon = 1;
        for (int i = 16; i < 176; i += 4) {
            int t0 = roundKeys[i - 4];
            int t1 = roundKeys[i - 3];
            int t2 = roundKeys[i - 2];
            int t3 = roundKeys[i - 1];
            if (i % 16 == 0) {
                int first = t0;
                t0 = sbox[t1] ^ rcon;
                t1 = sbox[t2];
                t2 = sbox[t3];
                t3 = sbox[first];
                rcon = xtime(rcon);
            }
            roundKeys[i] = roundKeys[i - 16] ^ t0;
            roundKeys[i + 1] = roundKeys[i - 15] ^ t1;
            roundKeys[i + 2] = roundKeys[i - 14] ^ t2;
            roundKeys[i + 3] = roundKeys[i - 13] ^ t3;
        }
        state = new int[16];
    }

    private void addRoundKey(int round) {
        int base = round * 16;
        for (int i = 0; i < 16; i++) {
            state[i] ^= roundKeys[base + i];
        }
    }

    /** SubBytes and ShiftRows together; the state is column-major as in FIPS-197. */
    private void subShift() {
        int[] s = state;
        int[] box = sbox;
        for (int i = 0; i < 16; i += 4) {
            s[i] = box[s[i]];
        }
        int t = box[s[1]];
        s[1] = box[s[5]];
        s[5] = box[s[9]];
        s[9] = box[s[13]];
        s[13] = t;
        t = box[s[2]];
        s[2] = box[s[10]];
        s[10] = t;
        t = box[s[6]];
        s[6] = box[s[14]];
        s[14] = t;
        t = box[s[15]];
        s[15] = box[s[11]];
        s[11] = box[s[7]];
        s[7] = box[s[3]];
        s[3] = t;
    }

    private void mixColumns() {
        int[] s = state;
        for (int c = 0; c < 16; c += 4) {
            int a0 = s[c];
            int a1 = s[c + 1];
            int a2 = s[c + 2];
            int a3 = s[c + 3];
            int all = a0 ^ a1 ^ a2 ^ a3;
            s[c] = a0 ^ all ^ xtime(a0 ^ a1);
            s[c + 1] = a1 ^ all ^ xtime(a1 ^ a2);
            s[c + 2] = a2 ^ all ^ xtime(a2 ^ a3);
            s[c + 3] = a3 ^ all ^ xtime(a3 ^ a0);
        }
    }

    void encrypt(int[] block) {
        for (int i = 0; i < 16; i++) {
            state[i] = block[i];
        }
        addRoundKey(0);
        for (int round = 1; round < 10; round++) {
            subShift();
            mixColumns();
            addRoundKey(round);
        }
        subShift();
        addRoundKey(10);
    }

    public int run(int iterations) {
        int good = 0;
        for (int it = 0; it < iterations; it++) {
            encrypt(plain);
            boolean same = true;
            for (int i = 0; i < 16; i++) {
                if (state[i] != cipherExpected[i]) {
                    same = false;
                }
            }
            if (same) {
                good++;
            }
        }
        return good;
    }

    public int expected() {
        return iterations();
    }
}
