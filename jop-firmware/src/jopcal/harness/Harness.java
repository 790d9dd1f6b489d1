package jopcal.harness;

import com.jopdesign.sys.Const;
import com.jopdesign.sys.Native;

/**
 * The measurement harness. It reads the cycle counter around the measured
 * region (start()/stop(); the host profiler counts bytecodes between the same
 * two calls) and prints the result lines the host parses:
 *
 *   @jopcal result bench=NAME iter=N cycles=C
 *   @jopcal error bench=NAME reason=checksum expected=E got=G
 *   @jopcal done
 *
 * Numbers are formatted here rather than with string concatenation so that the
 * harness needs nothing from the library beyond PrintStream.print(char) and
 * print(String), which every JOP runtime has.
 */
public final class Harness {
    private static int startCount;
    private static int elapsedCount;

    private Harness() {
    }

    /** Marks the start of the measured region. Keep this method minimal. */
    public static void start() {
        startCount = Native.rd(Const.IO_CNT);
    }

    /** Marks the end of the measured region. Keep this method minimal. */
    public static void stop() {
        elapsedCount = Native.rd(Const.IO_CNT) - startCount;
    }

    /**
     * Measures one workload and prints its result (or error) line.
     * Returns true when the workload's checksum was right.
     */
    public static boolean measure(Workload w) {
        w.setup();
        int iterations = w.iterations();
        start();
        int got = w.run(iterations);
        stop();
        // The counter is 32 bits wide: the difference modulo 2^32 is exact for
        // any region shorter than one wrap.
        long cycles = ((long) elapsedCount) & 0xffffffffL;
        int want = w.expected();
        if (got != want) {
            System.out.print("@jopcal error bench=");
            System.out.print(w.name());
            System.out.print(" reason=checksum expected=");
            printNumber(want);
            System.out.print(" got=");
            printNumber(got);
            System.out.println();
            return false;
        }
        System.out.print("@jopcal result bench=");
        System.out.print(w.name());
        System.out.print(" iter=");
        printNumber(iterations);
        System.out.print(" cycles=");
        printNumber(cycles);
        System.out.println();
        return true;
    }

    /** Ends a run: prints the done line, or exits non-zero after a failure. */
    public static void finish(boolean allPassed) {
        if (!allPassed) {
            System.out.println("@jopcal done status=failed");
            System.exit(1);
        }
        System.out.println("@jopcal done");
    }

    /** Entry point used by every workload's main(). */
    public static void runOne(Workload w) {
        finish(measure(w));
    }

    static void printNumber(long value) {
        if (value < 0) {
            System.out.print('-');
            // -(Long.MIN_VALUE) overflows; no checksum or count gets there.
            value = -value;
        }
        char[] digits = new char[20];
        int n = 0;
        do {
            digits[n++] = (char) ('0' + (int) (value % 10));
            value /= 10;
        } while (value != 0);
        while (n > 0) {
            System.out.print(digits[--n]);
        }
    }
}
