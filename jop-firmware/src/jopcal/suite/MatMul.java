package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/** Integer matrix multiply (16x16, int[][]); checked by the sum identity. */
public final class MatMul extends Workload {
    private static final int N = 16;
    private int[][] a;
    private int[][] b;
    private int[][] c;

    public static void main(String[] args) {
        Harness.runOne(new MatMul());
    }

    public String name() {
        return "MatMul";
    }

    public int iterations() {
        return 4;
    }

    public void setup() {
        a = new int[N][N];
        b = new int[N][N];
        c = new int[N][N];
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                a[i][j] = (i * 7 + j * 3) % 11 - 5;
                b[i][j] = (i * 5 + j * 13) % 17 - 8;
            }
        }
    }

    public int run(int iterations) {
        int sum = 0;
        for (int it = 0; it < iterations; it++) {
            for (int i = 0; i < N; i++) {
                int[] ai = a[i];
                int[] ci = c[i];
                for (int j = 0; j < N; j++) {
                    int s = 0;
                    for (int k = 0; k < N; k++) {
                        s += ai[k] * b[k][j];
                    }
                    ci[j] = s;
                }
            }
            for (int i = 0; i < N; i++) {
                for (int j = 0; j < N; j++) {
                    sum += c[i][j];
                }
            }
        }
        return sum;
    }

    /** sum(A*B) = sum over k of (column k sum of A) * (row k sum of B). */
    public int expected() {
        int total = 0;
        for (int k = 0; k < N; k++) {
            int colA = 0;
            int rowB = 0;
            for (int i = 0; i < N; i++) {
                colA += a[i][k];
                rowB += b[k][i];
            }
            total += colA * rowB;
        }
        return total * iterations();
    }
}
