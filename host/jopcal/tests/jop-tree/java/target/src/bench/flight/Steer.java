package flight;

public class Steer implements Runnable {
    private final Altitude a;

    Steer(Altitude a) {
        this.a = a;
    }

    public void run() {
        int e = 1200 - a.feet;
        for (int i = 0; i < 20; ++i) {
            a.feet += e / 8;
            e = 1200 - a.feet;
        }
    }
}
