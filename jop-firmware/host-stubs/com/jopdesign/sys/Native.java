package com.jopdesign.sys;

/**
 * Host stand-in for JOP's Native.rd (jopcal's own code): reading the cycle
 * counter address returns System.nanoTime() truncated to 32 bits, so a host
 * run measures nanoseconds with the same wrap-around arithmetic as JOP's
 * 32-bit cycle counter. On JOP the call compiles to the jopsys_rd bytecode.
 */
public final class Native {
    private Native() {
    }

    public static int rd(int address) {
        if (address == Const.IO_CNT) {
            return (int) System.nanoTime();
        }
        throw new IllegalArgumentException("host stand-in of Native.rd supports only Const.IO_CNT");
    }
}
