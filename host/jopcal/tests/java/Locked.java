/**
 * A hot method with a synchronized block, whose handler (as javac writes
 * it) covers its own code: the instrumenting profiler's rewrite must leave
 * it one that C1 compiles.
 */
public class Locked {
    static final Object LOCK = new Object();
    static int total;

    static int bump(int v) {
        synchronized (LOCK) {
            total += v;
            if (v % 1000 == 999) {
                // Through the block's handler: the lock released, the exception on its way.
                throw new IllegalStateException("at " + v);
            }
            return total;
        }
    }

    static void run() {
        int x = 0;
        for (int i = 0; i < 20000; i++) {
            try {
                x ^= bump(i);
            } catch (IllegalStateException e) {
                x += e.getMessage().length();
            }
        }
        System.out.println("locked " + x);
    }

    public static void main(String[] args) {
        // Loaded before the region: class loading inside it runs the JDK's
        // loader, which the two profilers see differently.
        System.out.println(new IllegalStateException("loaded " + args.length).getMessage());
        run();
    }
}
