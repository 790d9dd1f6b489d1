package jopcal.suite;

import jopcal.harness.Harness;

/** Runs the whole built-in suite in one program: one image for a board. */
public final class All {
    private All() {
    }

    public static void main(String[] args) {
        boolean ok = true;
        ok &= Harness.measure(new Sieve());
        ok &= Harness.measure(new Sort());
        ok &= Harness.measure(new MatMul());
        ok &= Harness.measure(new Crc32());
        ok &= Harness.measure(new Fir());
        ok &= Harness.measure(new Lift());
        ok &= Harness.measure(new Pid());
        ok &= Harness.measure(new Queens());
        ok &= Harness.measure(new Fib());
        ok &= Harness.measure(new Shapes());
        ok &= Harness.measure(new Alloc());
        ok &= Harness.measure(new Long64());
        ok &= Harness.measure(new Aes());
        ok &= Harness.measure(new Packet());
        ok &= Harness.measure(new Switch());
        Harness.finish(ok);
    }
}
