package com.jopdesign.sys;

/**
 * Host stand-in for JOP's I/O address constants (jopcal's own code).
 * Only the constants the jopcal harness uses are defined. The value is the
 * original JOP's I/O base (0xffffff80) plus 0, the cycle counter register.
 * On JOP the real class from the user's JOP tree is linked instead.
 */
public final class Const {
    public static final int IO_BASE = 0xffffff80;
    public static final int IO_CNT = IO_BASE + 0;

    private Const() {
    }
}
