/**
 * Recursive calls whose caller runs, next, the very bytecode the callee
 * returned from (its method's one return): HotSpot reports that location
 * once in a row, so the single-step agent counts the caller's return itself.
 */
public class Recursive {
    static int moves;

    // One `ireturn` for both arms: each level returns through it.
    static synchronized int depth(int d, int s) {
        return d == 0 ? s + 1 : depth(d - 1, s);
    }

    // The recursive call last, then the method's one `return`.
    static void hanoi(int n, int from, int to, int via) {
        if (n > 0) {
            hanoi(n - 1, from, via, to);
            moves++;
            hanoi(n - 1, via, to, from);
        }
    }

    // Not the same location: a caller that adds after the call.
    static int sum(int n) {
        if (n == 0) {
            return 0;
        }
        return n + sum(n - 1);
    }

    static void run() {
        int x = 0;
        for (int i = 0; i < 50; i++) {
            x += depth(i % 7, i);
            x += sum(i % 9);
        }
        hanoi(6, 1, 3, 2);
        System.out.println("recursive " + x + " " + moves);
    }

    public static void main(String[] args) {
        run();
    }
}
