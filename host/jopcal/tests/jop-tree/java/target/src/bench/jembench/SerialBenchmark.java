package jembench;

/** A single-threaded benchmark: perform() runs cnt rounds of its work. */
public abstract class SerialBenchmark {
    public abstract int perform(int cnt);

    public String toString() {
        return "toy";
    }
}
