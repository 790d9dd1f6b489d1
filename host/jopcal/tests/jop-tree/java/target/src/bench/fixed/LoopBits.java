package fixed;

import jembench.*;

/** Runs one benchmark a fixed number of times, timed by the millisecond clock. */
public class LoopBits {

    public static final int FREQ = 100000000;

    public static void main(String[] args) {
        SerialBenchmark bench = new jembench.kernel.BenchBits();
        System.out.println(bench);
        int t1 = (int) System.currentTimeMillis();
        bench.perform(100);
        int t2 = (int) System.currentTimeMillis();
        System.out.print(t2 - t1);
        System.out.println(" ms");
        System.out.print((t2 - t1) * (FREQ / 1000));
        System.out.println(" cycles");
    }
}
