package jopcal.prof;

/** One thread's state: its shadow stack of contexts, the invoke it waits on, its monitors, its call/return stream. */
public final class TS {
    final Thread thread;
    Node[] stack = new Node[64];
    /** Per frame: the invoke its caller still waited on when the JVM entered it on its own (0: none). */
    int[] saved = new int[64];
    /** Per frame: the site whose native method it is (0: a method with code). */
    int[] nat = new int[64];
    int depth;
    /** The counters of the context just entered: the rewritten method keeps them in a local. */
    public long[] c;
    /** The site of an invoke this thread executed whose callee has not been entered yet (0: none). */
    public int pending;
    /** A site whose invoke raised an exception itself (no callee ran). */
    int failed;
    /**
     * Where the exception in flight arose in the top frame: the pc of the
     * athrow that threw it there, or of the invoke whose callee it left.
     */
    public int arrivalPc;
    /** Monitors held: JOP's lock count, which decides a monitorexit's path. */
    int held;
    /** The thread runs jopcal's own work: nothing it calls is counted. */
    boolean busy;
    /** The shared state of frames outside any region. */
    boolean sink;
    int[] ev;
    int events;

    TS(Thread thread) {
        this.thread = thread;
        ev = new int[thread == null ? 0 : 1 << 16];
    }

    void push(Node n, int waiting) {
        if (depth == stack.length) {
            Node[] s = new Node[depth * 2];
            System.arraycopy(stack, 0, s, 0, depth);
            stack = s;
            int[] w = new int[depth * 2];
            System.arraycopy(saved, 0, w, 0, depth);
            saved = w;
            int[] v = new int[depth * 2];
            System.arraycopy(nat, 0, v, 0, depth);
            nat = v;
        }
        saved[depth] = waiting;
        nat[depth] = 0;
        stack[depth++] = n;
        c = n.c;
    }

    /** Leaves the top frame; the invoke its caller waited on waits again. */
    Node pop() {
        Node n = stack[--depth];
        stack[depth] = null;
        pending = saved[depth];
        // The frame below may not have read its counters yet: resolving the
        // field it reads them from can run a class loader's Java first.
        c = depth > 0 ? stack[depth - 1].c : null;
        return n;
    }

    void event(int e) {
        if (events == ev.length) {
            int[] a = new int[events * 2];
            System.arraycopy(ev, 0, a, 0, events);
            ev = a;
        }
        ev[events++] = e;
    }

    /** A monitor left: 0 when it was the last one held (JOP releases its lock), else 1. */
    int release() {
        if (held > 0) {
            held--;
        }
        return held == 0 ? 0 : 1;
    }
}
