package jopcal.corpus;

/** synchronized methods and blocks, nested, on a shared counter object. */
public class Counters {
    private int count;
    private final Object lock = new Object();

    synchronized void inc() {
        count++;
    }

    synchronized void add(int n) {
        for (int i = 0; i < n; i++) {
            inc();
        }
    }

    int read() {
        synchronized (lock) {
            synchronized (this) {
                return count;
            }
        }
    }

    public static void main(String[] args) {
        Counters c = new Counters();
        int seen = 0;
        for (int i = 0; i < 500; i++) {
            c.inc();
            if ((i & 7) == 0) {
                c.add(3);
            }
            seen += c.read() & 15;
        }
        System.out.println(c.read());
        System.out.println(seen);
    }
}
