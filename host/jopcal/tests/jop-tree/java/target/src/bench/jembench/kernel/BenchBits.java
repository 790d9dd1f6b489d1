package jembench.kernel;

import jembench.SerialBenchmark;

/** Bit counting three ways: shifts, table lookup and Kernighan's loop. */
public class BenchBits extends SerialBenchmark {
    private final int[] table = new int[256];

    public BenchBits() {
        for (int i = 0; i < 256; i++) {
            table[i] = (i & 1) + table[i >> 1];
        }
    }

    static int byShift(int v) {
        int n = 0;
        for (int i = 0; i < 32; i++) {
            n += (v >>> i) & 1;
        }
        return n;
    }

    int byTable(int v) {
        return table[v & 255] + table[(v >>> 8) & 255] + table[(v >>> 16) & 255] + table[v >>> 24];
    }

    static int byClearing(int v) {
        int n = 0;
        while (v != 0) {
            v &= v - 1;
            n++;
        }
        return n;
    }

    public int perform(int cnt) {
        int sum = 0;
        int v = 0x12345678;
        for (int i = 0; i < cnt; i++) {
            sum += byShift(v) + byTable(v) + byClearing(v);
            v = v * 1103515245 + 12345;
        }
        return sum;
    }
}
