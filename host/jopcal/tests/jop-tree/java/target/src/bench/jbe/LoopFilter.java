package jbe;

/** Runs the filter benchmark a fixed number of times. */
public class LoopFilter {

    public static void main(String[] args) {
        BenchMark bench = new BenchFilter();
        System.out.println(bench);
        int t1 = (int) System.currentTimeMillis();
        bench.test(2000);
        int t2 = (int) System.currentTimeMillis();
        System.out.print(t2 - t1);
        System.out.println(" ms");
    }
}
