package flight;

import flight.rt.Periodic;
import joprt.RtThread;

/** Makes the tasks as a JOP application does: real-time threads, one per handler. */
public class Autopilot implements Plane {
    private Periodic[] tasks;
    private final Altitude altitude = new Altitude();

    public void init() {
        tasks = new Periodic[2];
        tasks[0] = new Periodic(new Steer(altitude), 7, 25, "steer");
        tasks[0].setScope(64);
        tasks[1] = new Periodic(new Report(altitude), 3, 50, "report");
    }

    public void start() {
        RtThread.startMission();
    }
}
