package flight;

/** A miniature periodic-task application: two handlers at 25 and 50 ms. */
public class Main {
    public static void main(String[] args) {
        Plane p = new Autopilot();
        p.init();
        p.start();
    }
}
