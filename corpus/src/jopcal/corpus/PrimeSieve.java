package jopcal.corpus;

/** Primes with boolean[], short[] and byte[]: a sieve, gaps, digit sums. */
public class PrimeSieve {
    public static void main(String[] args) {
        int n = 6000;
        boolean[] comp = new boolean[n + 1];
        for (int i = 2; i * i <= n; i++) {
            if (!comp[i]) {
                for (int j = i * i; j <= n; j += i) comp[j] = true;
            }
        }
        short[] primes = new short[800];
        int count = 0;
        for (int i = 2; i <= n; i++) if (!comp[i]) primes[count++] = (short) i;
        byte[] gaps = new byte[count];
        int maxGap = 0;
        for (int i = 1; i < count; i++) {
            gaps[i] = (byte) (primes[i] - primes[i - 1]);
            if (gaps[i] > maxGap) maxGap = gaps[i];
        }
        int digits = 0;
        for (int i = 0; i < count; i++) {
            int p = primes[i];
            do { digits += p % 10; p /= 10; } while (p > 0);
        }
        System.out.println("count " + count + " maxGap " + maxGap + " digits " + digits);
    }
}
