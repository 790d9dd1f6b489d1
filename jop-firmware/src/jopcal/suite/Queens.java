package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/** Recursive backtracking: counts all solutions of the 8-queens problem (92). */
public final class Queens extends Workload {
    private static final int N = 8;
    private static final int SOLUTIONS = 92;
    private boolean[] column;
    private boolean[] diagUp;
    private boolean[] diagDown;

    public static void main(String[] args) {
        Harness.runOne(new Queens());
    }

    public String name() {
        return "Queens";
    }

    public int iterations() {
        return 1;
    }

    public void setup() {
        column = new boolean[N];
        diagUp = new boolean[2 * N - 1];
        diagDown = new boolean[2 * N - 1];
    }

    int place(int row) {
        if (row == N) {
            return 1;
        }
        int count = 0;
        for (int c = 0; c < N; c++) {
            int u = row + c;
            int d = row - c + N - 1;
            if (!column[c] && !diagUp[u] && !diagDown[d]) {
                column[c] = true;
                diagUp[u] = true;
                diagDown[d] = true;
                count += place(row + 1);
                column[c] = false;
                diagUp[u] = false;
                diagDown[d] = false;
            }
        }
        return count;
    }

    public int run(int iterations) {
        int sum = 0;
        for (int it = 0; it < iterations; it++) {
            sum += place(0);
        }
        return sum;
    }

    public int expected() {
        return SOLUTIONS * iterations();
    }
}
