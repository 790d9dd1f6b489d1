package jembench;

/** The miniature tree's benchmark list, in the form of JemBench's own Main: jopcal's
 *  jembench-all suite is every execute(new ...()) below that is not commented out. */
public final class Main {
    static final boolean SLOW = false;

    private static void execute(Object bench) {
        System.out.println(bench);
    }

    public static void main(String[] args) {
        execute(new jembench.kernel.BenchBits());
        // execute(new jembench.kernel.Retired());
        execute(new jembench.parallel.Spread());
        if (SLOW)
            execute(new jembench.application.BenchQueue());
        /* execute(new jembench.kernel.Gone()); */
        execute(new jembench.micro.Plain());
    }
}
