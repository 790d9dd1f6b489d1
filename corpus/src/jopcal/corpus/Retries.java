package jopcal.corpus;

/** Work that fails now and then, retried; a synchronized counter left by an exception; cleanup in finally. */
public class Retries {
    static class Busy extends RuntimeException { }

    private int attempts;
    private int state = 7;

    synchronized int step(int n) {
        attempts++;
        state = state * 31 + n;
        if ((state & 7) == 3) {
            throw new Busy();
        }
        return state & 255;
    }

    int work(int n) {
        int r = 0;
        for (int i = 0; i < 3; i++) {
            r += step(n + i);
        }
        return r;
    }

    static int cleanups;

    int attempt(int n) {
        try {
            return work(n);
        } finally {
            cleanups++;
        }
    }

    int withRetry(int n) {
        for (int tries = 0; ; tries++) {
            try {
                return attempt(n + tries);
            } catch (Busy e) {
                if (tries > 5) {
                    return -1;
                }
            }
        }
    }

    public static void main(String[] args) {
        Retries r = new Retries();
        int sum = 0;
        for (int i = 0; i < 300; i++) {
            sum += r.withRetry(i);
        }
        System.out.println("sum " + sum + " attempts " + r.attempts + " cleanups " + cleanups);
    }
}
