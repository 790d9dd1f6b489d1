package jbe;

/** A benchmark of the older suite: test() runs cnt rounds. */
public abstract class BenchMark {
    public abstract int test(int cnt);
}
