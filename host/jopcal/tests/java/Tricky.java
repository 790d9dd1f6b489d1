// What the instrumenting profiler must count exactly as the single-step one
// does (tests/profilers.rs): implicit and explicit exceptions caught in the
// method or a caller, lookupswitch arms (shared targets, the default),
// tableswitch, monitors (nested, synchronized methods), natives (leaf, and
// one that calls back into Java), a class initializer run in the middle of
// a straight run of code, and long shifts and compares.
public class Tricky {
    static int sink;

    static final class Late {
        static int value;

        static {
            value = 7;
            for (int i = 0; i < 3; i++) {
                value += i;
            }
        }
    }

    static int divide(int a, int b) {
        return a / b;
    }

    static int look(int k) {
        switch (k) {
            case 1:
            case 1000:
                return 10;
            case 50:
                return 20;
            case 70000:
                return 30;
            default:
                return -1;
        }
    }

    // The key from an array, not a local: the single-step agent cannot read
    // it, and both profilers count the cases up to the first that leads to
    // the target.
    static int lookAt(int[] keys, int i) {
        switch (keys[i]) {
            case 1:
            case 1000:
                return 10;
            default:
                return -1;
        }
    }

    static int table(int k) {
        switch (k) {
            case 0: return 3;
            case 1: return 5;
            case 2: return 7;
            default: return 0;
        }
    }

    static synchronized int locked(int x) {
        synchronized (Tricky.class) {
            return x + 1;
        }
    }

    public int callback(int x) {
        return x * 3;
    }

    static void thrower(int k) {
        if (k % 3 == 0) {
            throw new IllegalStateException("k " + k);
        }
        sink += k;
    }

    /** A finally that catches and throws again, two frames above the throw. */
    static int rethrown(int k) {
        try {
            thrower(k);
            return 1;
        } finally {
            sink += 7;
        }
    }

    public static void run() throws Exception {
        int[] a = new int[4];
        Object none = null;
        for (int i = 0; i < 12; i++) {
            try {
                a[i] = i;
                sink += 1;
            } catch (ArrayIndexOutOfBoundsException e) {
                sink += 2;
            }
            try {
                sink += divide(10, i % 3);
            } catch (ArithmeticException e) {
                sink += 3;
            }
            try {
                sink += none.hashCode();
            } catch (NullPointerException e) {
                sink += 4;
            }
            try {
                thrower(i);
            } catch (IllegalStateException e) {
                sink += 5;
            } finally {
                sink += 6;
            }
            try {
                sink += rethrown(i);
            } catch (IllegalArgumentException e) {
                sink -= 1;
            } catch (RuntimeException e) {
                sink += 8;
            }
            sink += look(i * 50) + look(i == 5 ? 70000 : i) + table(i % 5)
                    + look(1000) + lookAt(new int[] {1000, 1, 3}, i % 3);
            sink += locked(i);
        }
        // A class initializer the JVM runs in the middle of this run of code.
        int x = sink + 1;
        sink = x + Late.value;
        int[] b = new int[8];
        System.arraycopy(a, 0, b, 2, 4);
        sink += b[3] + System.identityHashCode(b) % 2 + new Object().hashCode() % 2;
        // A native (Method.invoke's) that calls back into Java.
        java.lang.reflect.Method m = Tricky.class.getMethod("callback", int.class);
        Tricky t = new Tricky();
        for (int i = 0; i < 3; i++) {
            sink += (Integer) m.invoke(t, i);
        }
        long l = 0x123456789L;
        for (int i = 0; i < 70; i += 7) {
            l = (l << i) ^ (l >>> (64 - i)) ^ (l >> 3);
            if (l < 0x1000L) {
                sink++;
            }
        }
        sink += (int) l;
    }

    public static void main(String[] args) throws Exception {
        // The classes run() uses are loaded before it: class loading is the
        // JDK's own work, whose state the profilers do not share.
        look(0);
        table(0);
        locked(0);
        new ArithmeticException();
        new ArrayIndexOutOfBoundsException();
        new NullPointerException();
        new IllegalStateException("k " + args.length);
        Tricky.class.getMethod("callback", int.class).invoke(new Tricky(), 0);
        // Loaded, not initialized: run() initializes it.
        Class.forName("Tricky$Late", false, Tricky.class.getClassLoader());
        int[] b = new int[8];
        System.arraycopy(b, 0, b, 2, 4);
        run();
        System.out.println(sink);
    }
}
