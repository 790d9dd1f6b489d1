package jopcal.corpus;

/** Devices behind an interface, a table built by a static initializer, codes dispatched by a switch, long checksums. */
public class Gadgets {
    interface Device {
        int poll(int t);
        String name();
    }

    static abstract class Base implements Device {
        final int id;
        Base(int id) { this.id = id; }
        public String name() { return "dev" + id; }
    }

    static class Sensor extends Base {
        int last;
        Sensor(int id) { super(id); }
        public int poll(int t) { last = (last * 3 + t + id) & 1023; return last; }
    }

    static class Counter extends Base {
        long count;
        Counter(int id) { super(id); }
        public int poll(int t) { count += t; return (int) (count % 1000); }
    }

    static class Faulty extends Sensor {
        Faulty(int id) { super(id); }
        public int poll(int t) {
            if ((t % 97) == 0) throw new IllegalStateException("fault at " + t);
            return super.poll(t) ^ 5;
        }
    }

    static final int[] WEIGHTS = new int[32];
    static {
        for (int i = 0; i < WEIGHTS.length; i++) WEIGHTS[i] = (i * i + 7) % 13;
    }

    static int action(int code, int v) {
        switch (code) {
            case 0: return v + 1;
            case 1: return v * 3;
            case 2: return v >> 1;
            case 3: return v ^ 0x55;
            case 5: return -v;
            case 8: return v & 0xff;
            default: return v;
        }
    }

    public static void main(String[] args) {
        Device[] devices = new Device[6];
        for (int i = 0; i < devices.length; i++) {
            devices[i] = (i % 3 == 0) ? (Device) new Sensor(i) : (i % 3 == 1) ? (Device) new Counter(i) : new Faulty(i);
        }
        long sum = 0;
        int faults = 0;
        String lastFault = "";
        for (int t = 1; t < 900; t++) {
            for (int d = 0; d < devices.length; d++) {
                try {
                    int v = devices[d].poll(t);
                    v = action(v % 10, v) * WEIGHTS[(t + d) & 31];
                    sum = sum * 31 + v;
                    sum ^= sum >>> 17;
                } catch (IllegalStateException e) {
                    faults++;
                    lastFault = e.getMessage();
                }
            }
        }
        System.out.println(devices[2].name() + " sum " + sum + " faults " + faults + " " + lastFault);
    }
}
