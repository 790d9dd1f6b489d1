package jopcal.corpus;

/** FixedPoint-point arithmetic in long (16.16): a polynomial, Newton square roots, a running mean. */
public class FixedPoint {
    static final int SHIFT = 16;
    static final long ONE = 1L << SHIFT;

    static long mul(long a, long b) { return (a * b) >> SHIFT; }
    static long div(long a, long b) { return (a << SHIFT) / b; }

    static long sqrt(long v) {
        if (v <= 0) return 0;
        long x = v > ONE ? v : ONE;
        for (int i = 0; i < 12; i++) x = (x + div(v, x)) >> 1;
        return x;
    }

    public static void main(String[] args) {
        long acc = 0, mean = 0;
        int neg = 0;
        for (int i = -200; i < 200; i++) {
            long x = ((long) i << SHIFT) / 17;
            long p = mul(mul(x, x), x) - 3 * mul(x, x) + (ONE >> 1);
            if (p < 0) neg++;
            acc += sqrt(Math.abs(p)) % 1000003;
            mean += (p - mean) / 8;
        }
        System.out.println("acc " + acc + " mean " + mean + " neg " + neg);
    }
}
