package jopcal.corpus;

/** Arrays of objects and of arrays: a grid of cells, multianewarray, aastore, clone-free copies. */
public class ObjectArrays {
    static final class Cell {
        int alive;

        Cell(int alive) {
            this.alive = alive;
        }
    }

    public static void main(String[] args) {
        int n = 10;
        Cell[][] grid = new Cell[n][n];
        for (int y = 0; y < n; y++) {
            for (int x = 0; x < n; x++) {
                grid[y][x] = new Cell((x * 3 + y * 5) % 7 < 3 ? 1 : 0);
            }
        }
        int[][] counts = new int[n][n];
        int population = 0;
        for (int gen = 0; gen < 6; gen++) {
            for (int y = 0; y < n; y++) {
                for (int x = 0; x < n; x++) {
                    int c = 0;
                    for (int dy = -1; dy <= 1; dy++) {
                        for (int dx = -1; dx <= 1; dx++) {
                            if ((dx != 0 || dy != 0)) {
                                c += grid[(y + dy + n) % n][(x + dx + n) % n].alive;
                            }
                        }
                    }
                    counts[y][x] = c;
                }
            }
            Cell[][] next = new Cell[n][];
            for (int y = 0; y < n; y++) {
                next[y] = new Cell[n];
                for (int x = 0; x < n; x++) {
                    int c = counts[y][x];
                    int a = grid[y][x].alive;
                    next[y][x] = new Cell((c == 3 || (a == 1 && c == 2)) ? 1 : 0);
                }
            }
            grid = next;
        }
        for (int y = 0; y < n; y++) {
            for (int x = 0; x < n; x++) {
                population += grid[y][x].alive;
            }
        }
        System.out.println(population);
    }
}
