package flight.rt;

import joprt.RtThread;

/** A periodic task on the tree's real-time threads (never compiled by jopcal). */
public class Periodic extends RtThread {
    private final Runnable handler;

    public Periodic(Runnable handler, int priority, int periodMs, String name) {
        super(priority, periodMs * 1000);
        this.handler = handler;
    }

    public void setScope(int words) {
    }

    public void run() {
        for (;;) {
            handler.run();
            waitForNextPeriod();
        }
    }
}
