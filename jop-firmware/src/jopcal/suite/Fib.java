package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/** Doubly recursive Fibonacci: invoke/return bound, fib(16) = 987. */
public final class Fib extends Workload {
    public static void main(String[] args) {
        Harness.runOne(new Fib());
    }

    public String name() {
        return "Fib";
    }

    public int iterations() {
        return 3;
    }

    static int fib(int n) {
        if (n < 2) {
            return n;
        }
        return fib(n - 1) + fib(n - 2);
    }

    public int run(int iterations) {
        int sum = 0;
        for (int it = 0; it < iterations; it++) {
            sum += fib(16);
        }
        return sum;
    }

    public int expected() {
        return 987 * iterations();
    }
}
