package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/** Sieve of Eratosthenes over 2..2000: an integer kernel on a boolean array. */
public final class Sieve extends Workload {
    private static final int LIMIT = 2000;
    /** pi(2000), the number of primes not above 2000. */
    private static final int PRIMES = 303;
    private boolean[] composite;

    public static void main(String[] args) {
        Harness.runOne(new Sieve());
    }

    public String name() {
        return "Sieve";
    }

    public int iterations() {
        return 8;
    }

    public void setup() {
        composite = new boolean[LIMIT + 1];
    }

    public int run(int iterations) {
        boolean[] c = composite;
        int sum = 0;
        for (int it = 0; it < iterations; it++) {
            for (int i = 0; i <= LIMIT; i++) {
                c[i] = false;
            }
            for (int i = 2; i * i <= LIMIT; i++) {
                if (!c[i]) {
                    for (int j = i * i; j <= LIMIT; j += i) {
                        c[j] = true;
                    }
                }
            }
            int count = 0;
            for (int i = 2; i <= LIMIT; i++) {
                if (!c[i]) {
                    count++;
                }
            }
            sum += count;
        }
        return sum;
    }

    public int expected() {
        return iterations() * PRIMES;
    }
}
