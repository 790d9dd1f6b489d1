// A program whose bytecode counts are computed by hand in tests/profile.rs.
// Keep the code exactly as it is: the expected counts follow javac's output.
public class Exact {
    interface Shape {
        int area();
    }

    static final class Sq implements Shape {
        final int s;

        Sq(int s) {
            this.s = s;
        }

        public int area() {
            return s * s;
        }
    }

    static final class Rect implements Shape {
        final int w;
        final int h;

        Rect(int w, int h) {
            this.w = w;
            this.h = h;
        }

        public int area() {
            return w * h;
        }
    }

    static class Lazy {
        static int[] table;

        static {
            table = new int[3];
            table[1] = 7;
        }
    }

    static int loop(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            s += i;
        }
        return s;
    }

    static int fact(int n) {
        return n <= 1 ? 1 : n * fact(n - 1);
    }

    static int thrower(int x) {
        if (x > 0) {
            throw new IllegalStateException();
        }
        return x;
    }

    static int middle(int x) {
        return thrower(x) + 1;
    }

    static int catcher(int x) {
        try {
            return middle(x);
        } catch (IllegalStateException e) {
            return -1;
        }
    }

    public static void main(String[] args) {
        int total = loop(10);
        Shape[] shapes = {new Sq(3), new Rect(2, 5)};
        for (int i = 0; i < 4; i++) {
            total += shapes[i & 1].area();
        }
        total += fact(5);
        total += catcher(1);
        total += Lazy.table[1];
        if (total != 45 + 2 * 9 + 2 * 10 + 120 - 1 + 7) {
            System.exit(3);
        }
        if (args.length > 0 && args[0].equals("exit-inside")) {
            System.exit(4);
        }
    }
}
