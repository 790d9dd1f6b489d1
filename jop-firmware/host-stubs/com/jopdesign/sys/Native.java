package com.jopdesign.sys;

/**
 * Host stand-in for JOP's Native (jopcal's own code). Reading the cycle
 * counter address returns System.nanoTime() truncated to 32 bits, so a host
 * run measures nanoseconds with the same wrap-around arithmetic as JOP's
 * 32-bit cycle counter. On JOP the call compiles to the jopsys_rd bytecode.
 * makeLong joins two words as JOP's stack holds a long, and toDouble, toLong,
 * toFloat and toInt retype a value's bits (each JOP's jopsys_nop); the
 * tree's runtime routines and its java.lang.Math, which the host profile
 * runs, use them.
 */
public final class Native {
    private Native() {
    }

    /**
     * Any other address is JOP's memory or an I/O device, which the host does
     * not have: it reads 0. The estimate prices the read as jopsys_rd all the
     * same. The tree's cache study (cache.CallKfl) reads word 1234 in its loop
     * only to mark a pass for JopSim's statistics and drops the value; a
     * program that acts on what it read runs otherwise on the host, and its
     * output shows it.
     */
    public static int rd(int address) {
        if (address == Const.IO_CNT) {
            return (int) System.nanoTime();
        }
        return 0;
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
