package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/**
 * Control code: an elevator controller as a state machine, driven tick by tick
 * by a deterministic stream of floor calls. Every call must be served; the
 * checksum counts served calls and the floors travelled.
 */
public final class Lift extends Workload {
    static final int FLOORS = 8;
    static final int IDLE = 0;
    static final int UP = 1;
    static final int DOWN = 2;
    static final int DOORS = 3;
    static final int TICKS = 600;
    static final int DOOR_TICKS = 3;

    private boolean[] calls;
    private int floor;
    private int state;
    private int timer;
    private int served;
    private int travelled;
    private int pending;
    private int seed;

    public static void main(String[] args) {
        Harness.runOne(new Lift());
    }

    public String name() {
        return "Lift";
    }

    public int iterations() {
        return 3;
    }

    public void setup() {
        calls = new boolean[FLOORS];
    }

    private void reset() {
        for (int i = 0; i < FLOORS; i++) {
            calls[i] = false;
        }
        floor = 0;
        state = IDLE;
        timer = 0;
        served = 0;
        travelled = 0;
        pending = 0;
        seed = 7;
    }

    private int nextRandom() {
        seed = seed * 1664525 + 1013904223;
        return (seed >>> 16) & 0x7fff;
    }

    private boolean callsAbove() {
        for (int f = floor + 1; f < FLOORS; f++) {
            if (calls[f]) {
                return true;
            }
        }
        return false;
    }

    private boolean callsBelow() {
        for (int f = floor - 1; f >= 0; f--) {
            if (calls[f]) {
                return true;
            }
        }
        return false;
    }

    private void request(int f) {
        if (!calls[f]) {
            calls[f] = true;
            pending++;
        }
    }

    private void arrive() {
        if (calls[floor]) {
            calls[floor] = false;
            pending--;
            served++;
            state = DOORS;
            timer = DOOR_TICKS;
        }
    }

    private void tick() {
        switch (state) {
            case IDLE:
                if (calls[floor]) {
                    arrive();
                } else if (callsAbove()) {
                    state = UP;
                } else if (callsBelow()) {
                    state = DOWN;
                }
                break;
            case UP:
                floor++;
                travelled++;
                arrive();
                if (state == UP && !callsAbove()) {
                    state = callsBelow() ? DOWN : IDLE;
                }
                break;
            case DOWN:
                floor--;
                travelled++;
                arrive();
                if (state == DOWN && !callsBelow()) {
                    state = callsAbove() ? UP : IDLE;
                }
                break;
            default: // DOORS
                if (--timer == 0) {
                    state = IDLE;
                }
                break;
        }
    }

    /** Runs the controller; returns served * 1000 + travelled, or -1 if a call was lost. */
    int simulate() {
        reset();
        int issued = 0;
        for (int t = 0; t < TICKS; t++) {
            int r = nextRandom();
            if ((r & 7) == 0) {
                int f = (r >> 3) % FLOORS;
                if (!calls[f]) {
                    issued++;
                }
                request(f);
            }
            tick();
        }
        // Drain: no new calls until every pending one is served.
        int guard = 0;
        while (pending > 0 && guard < 1000) {
            tick();
            guard++;
        }
        if (pending != 0 || served != issued) {
            return -1;
        }
        return served * 1000 + travelled;
    }

    public int run(int iterations) {
        int sum = 0;
        for (int it = 0; it < iterations; it++) {
            sum += simulate();
        }
        return sum;
    }

    public int expected() {
        // The controller is deterministic; the value is the host JVM's result,
        // and simulate() itself verifies that every call was served.
        return 68152 * iterations();
    }
}
