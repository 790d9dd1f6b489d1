package jembench.parallel;

import jembench.ParallelBenchmark;

/** Sums of squares over slices of a table, one slice per worker. */
public class Spread extends ParallelBenchmark implements Runnable {
    private final int[] table = new int[64];
    private int next;
    private int total;

    public Spread() {
        for (int i = 0; i < table.length; i++) {
            table[i] = i * 7 + 3;
        }
    }

    public Runnable getWorker() {
        return this;
    }

    public void run() {
        int from = (next & 7) * 8;
        next++;
        for (int i = from; i < from + 8; i++) {
            total += table[i] * table[i];
        }
    }
}
