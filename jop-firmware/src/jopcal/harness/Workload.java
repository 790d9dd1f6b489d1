package jopcal.harness;

/**
 * One workload of the suite. The harness calls setup() and expected() outside
 * the measured region and run() inside it. run() may call only the workload's
 * own code, allocate objects and arrays, and call Object's constructor: no
 * library methods, so that the host JDK's library and JOP's library cannot make
 * the host profile differ from what the target executes.
 */
public abstract class Workload {
    /** Name used in result lines; must match jop-firmware/suite.toml. */
    public abstract String name();

    /** Fixed iteration count for the measured region. */
    public abstract int iterations();

    /** Builds tables and inputs; runs outside the measured region. */
    public void setup() {
    }

    /** The measured work; returns a checksum of everything it computed. */
    public abstract int run(int iterations);

    /** The checksum run(iterations()) must return, computed or known independently. */
    public abstract int expected();
}
