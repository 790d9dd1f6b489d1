package flight;

public class Report implements Runnable {
    private final Altitude a;
    int sum;

    Report(Altitude a) {
        this.a = a;
    }

    public void run() {
        for (int i = 0; i < 10; ++i) {
            sum += a.feet >> i;
        }
    }
}
