package jopcal.corpus;

/** 64-bit arithmetic: multiply, divide, remainder and shifts, as a hash and a modular power. */
public class LongMath {
    static long powMod(long base, long exp, long mod) {
        long result = 1;
        base %= mod;
        while (exp > 0) {
            if ((exp & 1) == 1) {
                result = result * base % mod;
            }
            base = base * base % mod;
            exp >>= 1;
        }
        return result;
    }

    public static void main(String[] args) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < 120; i++) {
            h ^= i;
            h *= 0x100000001b3L;
            h ^= h >>> 29;
        }
        long acc = 0;
        for (int i = 1; i < 25; i++) {
            acc += powMod(i + 3, 1000 + i, 1000003L);
            acc += (h / (i * 77L)) % 1000;
        }
        System.out.println(h);
        System.out.println(acc);
    }
}
