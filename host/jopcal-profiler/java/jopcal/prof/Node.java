package jopcal.prof;

/** One calling context: a method entered from a call site of its parent context. */
public final class Node {
    final Node parent;
    final int mid;
    /** The call site's original pc in the parent (-1 at the root and for a thread's first frame). */
    final int pc;
    /** The invoke opcode (0: the JVM entered the method on its own). */
    final int op;
    /**
     * The host JVM's work, not the program's: a context the JVM entered on
     * its own (class loading, a static initializer) or one below it, as the
     * profile's reader decides (Profile::jvm_work). Its allocations are not
     * counted: JOP does neither in a program's region.
     */
    final boolean jvmWork;
    int id;
    long calls;
    /** Calls of a native made while the thread held no monitor. */
    long heldFree;
    /** One counter per slot of the method (its segments, then its lookupswitch arms). */
    final long[] c;

    private long[] keys = new long[8];
    private Node[] vals = new Node[8];
    private int size;
    private Node lastChild;

    /** Early exits of a segment by implicit exception, by original pc. */
    final Tally exits = new Tally();
    /** Executions by opcode << 8 | the operand that decides its microcode's path. */
    final Tally operands = new Tally();

    Node(Node parent, int mid, int pc, int op) {
        this.parent = parent;
        this.mid = mid;
        this.pc = pc;
        this.op = op;
        this.jvmWork = parent != null && (op == 0 || parent.jvmWork);
        this.c = new long[Rt.mSlots[mid]];
        Rt.register(this);
    }

    /** The context {@link #child} returned last, if it is the one asked for (else null). */
    Node cached(int pc, int mid, int op) {
        // The child's own fields are final: no other thread's update of the
        // cache can make them disagree with it.
        Node last = lastChild;
        return last != null && last.pc == pc && last.mid == mid && last.op == op ? last : null;
    }

    /** The context of {@code mid} entered from {@code pc} by {@code op}, made on first use. */
    Node child(int pc, int mid, int op) {
        Node last = cached(pc, mid, op);
        if (last != null) {
            return last;
        }
        long key = ((long) (pc + 1) << 40) | ((long) mid << 8) | op;
        long[] k = keys;
        Node[] v = vals;
        int mask = k.length - 1;
        int i = (int) (key ^ (key >>> 29)) * 0x9E3779B1 >>> 7 & mask;
        while (true) {
            Node x = v[i];
            if (x == null) {
                break;
            }
            if (k[i] == key) {
                lastChild = x;
                return x;
            }
            i = (i + 1) & mask;
        }
        synchronized (this) {
            Node found = find(key);
            if (found == null) {
                found = new Node(this, mid, pc, op);
                insert(key, found);
            }
            lastChild = found;
            return found;
        }
    }

    private Node find(long key) {
        int mask = keys.length - 1;
        int i = (int) (key ^ (key >>> 29)) * 0x9E3779B1 >>> 7 & mask;
        while (vals[i] != null) {
            if (keys[i] == key) {
                return vals[i];
            }
            i = (i + 1) & mask;
        }
        return null;
    }

    private void insert(long key, Node n) {
        if ((size + 1) * 2 > keys.length) {
            long[] ok = keys;
            Node[] ov = vals;
            long[] nk = new long[ok.length * 2];
            Node[] nv = new Node[ok.length * 2];
            int mask = nk.length - 1;
            for (int j = 0; j < ok.length; j++) {
                if (ov[j] != null) {
                    int i = (int) (ok[j] ^ (ok[j] >>> 29)) * 0x9E3779B1 >>> 7 & mask;
                    while (nv[i] != null) {
                        i = (i + 1) & mask;
                    }
                    nk[i] = ok[j];
                    nv[i] = ov[j];
                }
            }
            keys = nk;
            vals = nv;
        }
        int mask = keys.length - 1;
        int i = (int) (key ^ (key >>> 29)) * 0x9E3779B1 >>> 7 & mask;
        while (vals[i] != null) {
            i = (i + 1) & mask;
        }
        keys[i] = key;
        vals[i] = n;
        size++;
    }

    /** An implicit exception left this context's segment at original pc {@code pc}. */
    void exit(int pc, boolean counting) {
        if (counting) {
            exits.add(pc);
        }
    }

    /** One execution of {@code op} whose microcode path {@code value} decides. */
    void operand(int op, int value) {
        operands.add(op << 8 | value);
    }

    /** Counts by a small int key, few of them: a list searched in order. */
    static final class Tally {
        int[] keys = new int[0];
        long[] counts = new long[0];
        int size;

        void add(int key) {
            for (int k = 0; k < size; k++) {
                if (keys[k] == key) {
                    counts[k]++;
                    return;
                }
            }
            if (size == keys.length) {
                int[] a = new int[size * 2 + 2];
                long[] b = new long[size * 2 + 2];
                System.arraycopy(keys, 0, a, 0, size);
                System.arraycopy(counts, 0, b, 0, size);
                keys = a;
                counts = b;
            }
            keys[size] = key;
            counts[size++] = 1;
        }
    }
}
