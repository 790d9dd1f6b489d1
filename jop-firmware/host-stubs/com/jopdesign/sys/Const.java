package com.jopdesign.sys;

/**
 * Host stand-in for JOP's I/O address constants (jopcal's own code).
 * Only the constants the jopcal harness and the host's Native use are
 * defined: the original JOP's I/O base (0xffffff80) plus 0, the cycle
 * counter register, and plus 1, the microsecond counter.
 * On JOP the real class from the user's JOP tree is linked instead.
 */
public final class Const {
    public static final int IO_BASE = 0xffffff80;
    public static final int IO_CNT = IO_BASE + 0;
    /** The microsecond counter, which JOP's System.currentTimeMillis reads. */
    public static final int IO_US_CNT = IO_BASE + 1;

    private Const() {
    }
}
