package jembench.kernel;

import jembench.SerialBenchmark;

/** Insertion sort of a pseudo-random array, refilled every round. */
public class BenchInsertion extends SerialBenchmark {
    private final int[] data = new int[40];

    public int perform(int cnt) {
        int seed = 7;
        int check = 0;
        for (int r = 0; r < cnt; r++) {
            for (int i = 0; i < data.length; i++) {
                seed = seed * 69069 + 1;
                data[i] = seed >>> 20;
            }
            for (int i = 1; i < data.length; i++) {
                int x = data[i];
                int j = i - 1;
                while (j >= 0 && data[j] > x) {
                    data[j + 1] = data[j];
                    j--;
                }
                data[j + 1] = x;
            }
            check += data[0] + data[data.length - 1];
        }
        return check;
    }
}
