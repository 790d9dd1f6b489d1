package jopcal.corpus;

/** Bit twiddling on int and long: rotates, unsigned shifts, masks, bit counts. */
public class BitTwiddle {
    static int rotl(int x, int n) { return (x << n) | (x >>> (32 - n)); }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    static int pop(int x) {
        int c = 0;
        while (x != 0) { x &= x - 1; c++; }
        return c;
    }

    public static void main(String[] args) {
        int h = 0x12345678, ones = 0;
        long acc = 7;
        for (int i = 0; i < 2000; i++) {
            h = rotl(h ^ i, (i & 15) + 1) + 0x9e3779b9;
            ones += pop(h);
            if ((i & 7) == 0) acc = mix(acc + i);
            acc ^= ((long) h << 17) >> (i & 31);
        }
        byte b = (byte) h;
        short s = (short) (h >> 8);
        char c = (char) (h >>> 16);
        System.out.println("h " + h + " ones " + ones + " acc " + acc + " b " + b + " s " + s + " c " + (int) c
                + " lz " + Integer.numberOfLeadingZeros(ones) + " hex " + Integer.toHexString(h));
    }
}
