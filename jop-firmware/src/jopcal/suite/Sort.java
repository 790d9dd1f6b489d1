package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/** Recursive quicksort of pseudo-random ints; checked against an insertion sort. */
public final class Sort extends Workload {
    private static final int SIZE = 256;
    private int[] data;

    public static void main(String[] args) {
        Harness.runOne(new Sort());
    }

    public String name() {
        return "Sort";
    }

    public int iterations() {
        return 6;
    }

    public void setup() {
        data = new int[SIZE];
    }

    static void fill(int[] a, int seed) {
        int x = seed;
        for (int i = 0; i < a.length; i++) {
            x = x * 1103515245 + 12345;
            a[i] = (x >>> 8) & 0xffff;
        }
    }

    static void quicksort(int[] a, int lo, int hi) {
        while (lo < hi) {
            int pivot = a[(lo + hi) >>> 1];
            int i = lo;
            int j = hi;
            while (i <= j) {
                while (a[i] < pivot) {
                    i++;
                }
                while (a[j] > pivot) {
                    j--;
                }
                if (i <= j) {
                    int t = a[i];
                    a[i] = a[j];
                    a[j] = t;
                    i++;
                    j--;
                }
            }
            // Recurse into the smaller half, loop over the larger one.
            if (j - lo < hi - i) {
                quicksort(a, lo, j);
                lo = i;
            } else {
                quicksort(a, i, hi);
                hi = j;
            }
        }
    }

    /** Order-sensitive checksum: differs for any permutation of a sorted array. */
    static int digest(int[] a) {
        int h = 0;
        for (int i = 0; i < a.length; i++) {
            h = h * 31 + a[i] * (i + 1);
        }
        return h;
    }

    public int run(int iterations) {
        int sum = 0;
        for (int it = 0; it < iterations; it++) {
            fill(data, it + 1);
            quicksort(data, 0, data.length - 1);
            sum += digest(data);
        }
        return sum;
    }

    public int expected() {
        int[] a = new int[SIZE];
        int sum = 0;
        for (int it = 0; it < iterations(); it++) {
            fill(a, it + 1);
            for (int i = 1; i < a.length; i++) {
                int v = a[i];
                int j = i - 1;
                while (j >= 0 && a[j] > v) {
                    a[j + 1] = a[j];
                    j--;
                }
                a[j + 1] = v;
            }
            sum += digest(a);
        }
        return sum;
    }
}
