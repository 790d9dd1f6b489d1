package com.jopdesign.sys;

/**
 * Host stand-in for JOP's Native (jopcal's own code). Reading the cycle
 * counter address returns System.nanoTime() truncated to 32 bits, so a host
 * run measures nanoseconds with the same wrap-around arithmetic as JOP's
 * 32-bit cycle counter; the microsecond counter reads the target's clock
 * where jopcal has it (TargetClock). On JOP the call compiles to the
 * jopsys_rd bytecode.
 * makeLong joins two words as JOP's stack holds a long, and toDouble, toLong,
 * toFloat and toInt retype a value's bits (each JOP's jopsys_nop); the
 * tree's runtime routines and its java.lang.Math, which the host profile
 * runs, use them.
 */
public final class Native {
    private Native() {
    }

    /**
     * The microsecond counter (what JOP's System.currentTimeMillis and
     * nanoTime read) reads the target's clock where jopcal has it: the
     * values the measured run's counter gave, in order (see TargetClock).
     * Any other address is JOP's memory or an I/O device, which the host
     * does not have: it reads 0. The estimate prices every read as
     * jopsys_rd. The tree's cache study (cache.CallKfl) reads word 1234 in
     * its loop only to mark a pass for JopSim's statistics and drops the
     * value; a program that acts on what it read runs otherwise on the host,
     * and its output shows it.
     */
    public static int rd(int address) {
        if (address == Const.IO_CNT) {
            return (int) System.nanoTime();
        }
        if (address == Const.IO_US_CNT) {
            return TargetClock.read();
        }
        return 0;
    }

    /**
     * Loads the target's clock for the microsecond counter (see
     * TargetClock). jopcal's host launcher calls it before the program
     * starts, so that reading the property is not the program's work; on
     * JOP there is no such method, and no program calls it.
     */
    public static void loadTargetClock() {
        TargetClock.load();
    }

    /**
     * The microsecond counter on the host: the values of the system
     * property jopcal.clock (comma-separated, what the target's counter gave
     * the program, which jopcal passes to a profiled run), one per read, then
     * the host's own microseconds. No static initializer: the virtual board
     * runs this class too, in the built-in suite, where no clock is read.
     */
    static final class TargetClock {
        private static int[] values;
        private static int next;

        private TargetClock() {
        }

        static void load() {
            if (values == null) {
                values = parse(System.getProperty("jopcal.clock", ""));
            }
        }

        static int read() {
            load();
            if (next < values.length) {
                return values[next++];
            }
            return (int) (System.nanoTime() / 1000);
        }

        private static int[] parse(String list) {
            if (list.isEmpty()) {
                return new int[0];
            }
            String[] parts = list.split(",");
            int[] read = new int[parts.length];
            for (int i = 0; i < parts.length; i++) {
                read[i] = Integer.parseInt(parts[i].trim());
            }
            return read;
        }
    }

    public static long makeLong(int high, int low) {
        return ((long) high << 32) | (low & 0xffffffffL);
    }

    public static double toDouble(long bits) {
        return Double.longBitsToDouble(bits);
    }

    public static long toLong(double value) {
        return Double.doubleToRawLongBits(value);
    }

    public static float toFloat(int bits) {
        return Float.intBitsToFloat(bits);
    }

    public static int toInt(float value) {
        return Float.floatToRawIntBits(value);
    }

    public static void wrMem(int value, int address) {
        throw new IllegalArgumentException("host stand-in of Native.wrMem: the host has no JOP memory or I/O");
    }
}
