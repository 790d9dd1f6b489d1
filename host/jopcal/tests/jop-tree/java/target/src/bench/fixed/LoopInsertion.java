package fixed;

import jembench.*;

/** Runs one benchmark a fixed number of times, timed by the millisecond clock. */
public class LoopInsertion {

    public static final int FREQ = 100000000;

    public static void main(String[] args) {
        SerialBenchmark bench = new jembench.kernel.BenchInsertion();
        System.out.println(bench);
        int t1 = (int) System.currentTimeMillis();
        for (int i = 0; i < 20; ++i) {
            bench.perform(1);
        }
        int t2 = (int) System.currentTimeMillis();
        System.out.print(t2 - t1);
        System.out.println(" ms");
        System.out.print((t2 - t1) * (FREQ / 1000));
        System.out.println(" cycles");
    }
}
