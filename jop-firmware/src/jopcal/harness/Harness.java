package jopcal.harness;

import com.jopdesign.sys.Const;
import com.jopdesign.sys.Native;

/**
 * The measurement harness. It reads the cycle counter around the measured
 * region (start()/stop(); the host profiler counts bytecodes between the same
 * two calls) and prints the result lines the host parses:
 *
 *   @jopcal result bench=NAME iter=N cycles=C chk=K
 *   @jopcal error bench=NAME reason=checksum expected=E got=G chk=K
 *   @jopcal done
 *
 * chk is the sum of the line's characters before " chk=", modulo 65536: the
 * host rejects a line that a serial link corrupted instead of reading a wrong
 * cycle count from it.
 *
 * Numbers are formatted here rather than with string concatenation so that the
 * harness needs nothing from the library beyond PrintStream.print(char),
 * String.length() and String.charAt(), which every JOP runtime has.
 */
public final class Harness {
    private static int startCount;
    private static int elapsedCount;
    /** Running sum of the characters of the line being printed. */
    private static int lineSum;

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
            beginLine();
            put("@jopcal error bench=");
            put(w.name());
            put(" reason=checksum expected=");
            putNumber(want);
            put(" got=");
            putNumber(got);
            endLineWithCheck();
            return false;
        }
        printResult(w.name(), iterations, cycles);
        return true;
    }

    /**
     * Prints the result line of a region measured by the caller's own
     * start()/stop() pair, then the done line. jopcal's wrappers of a JOP
     * tree's benchmarks call it: their work has no checksum to compare.
     */
    public static void report(String name, int iterations) {
        printResult(name, iterations, ((long) elapsedCount) & 0xffffffffL);
        finish(true);
    }

    private static void printResult(String name, int iterations, long cycles) {
        beginLine();
        put("@jopcal result bench=");
        put(name);
        put(" iter=");
        putNumber(iterations);
        put(" cycles=");
        putNumber(cycles);
        endLineWithCheck();
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

    private static void beginLine() {
        lineSum = 0;
    }

    private static void put(char c) {
        lineSum = (lineSum + c) & 0xffff;
        System.out.print(c);
    }

    private static void put(String s) {
        for (int i = 0; i < s.length(); i++) {
            put(s.charAt(i));
        }
    }

    private static void endLineWithCheck() {
        int check = lineSum;
        put(" chk=");
        putNumber(check);
        System.out.println();
    }

    static void putNumber(long value) {
        if (value < 0) {
            put('-');
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
            put(digits[--n]);
        }
    }
}
