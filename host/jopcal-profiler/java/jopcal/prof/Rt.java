package jopcal.prof;

import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

/**
 * The run-time half of jopcal's instrumenting profiler: what the rewritten
 * classes call. It lives on the boot class path so that every class, the
 * JDK's own included, can reach it, and it is never instrumented itself.
 *
 * Its hot paths (enter, exit, the counters the rewritten code increments
 * in the array enter hands out) use nothing but arrays and its own classes:
 * a JDK method it called would be instrumented and call back into it. Work
 * that needs the JDK (registering a class, walking a stack, writing the
 * profile) marks the thread busy first, so that what it runs is counted
 * nowhere.
 *
 * What it records is raw: per calling context, one counter per straight
 * run of the method's original code (a segment, as {@link Agent} cut it),
 * the original pcs where an implicit exception left a segment early, the
 * operands that decide a JOP routine's path; each frame an exception arrived
 * in (where it arose there, its class, the handler entered or none); and the
 * owner thread's call/return stream. jopcal (crate jopcal-profiler, module
 * instrumented) turns it into the same profile the single-step agent writes.
 */
public final class Rt {
    private Rt() {}

    // ---- what the agent registered (under LOCK; read without it: arrays only grow, and a
    // method or site is registered before any code that names it is loaded)
    static final Object LOCK = new Object();
    static volatile String[] mClass = new String[1024];
    static volatile String[] mName = new String[1024];
    static volatile String[] mDesc = new String[1024];
    /** NATIVE, SYNCHRONIZED, SITE_NATIVE (resolved when written), INIT, CLINIT. */
    static volatile int[] mFlags = new int[1024];
    static volatile int[] mSig = new int[1024];
    /** Counter slots of each method: its segments, then its lookupswitch arms. */
    static volatile int[] mSlots = new int[1024];
    static volatile int[][] mSegments = new int[1024][];
    /** Per extra slot: opcode << 8 | operand. */
    static volatile int[][] mSlotOperands = new int[1024][];
    /** Per method: instrumented bci -> original pc (index: instrumented bci; -1 between). */
    static volatile int[][] mPcMap = new int[1024][];
    static volatile int[] mClassIndex = new int[1024];
    /** Per method that stands for a site's native: the site (0 for the others). */
    static volatile int[] mSite = new int[1024];
    static int methods = 1; // 0 is no method

    static volatile byte[][] cBytes = new byte[256][];
    static volatile String[] cName = new String[256];
    static volatile ClassLoader[] cLoader = new ClassLoader[256];
    static int classes = 0;

    static volatile int[] sMethod = new int[4096];
    static volatile int[] sPc = new int[4096];
    static volatile int[] sOp = new int[4096];
    static volatile int[] sSig = new int[4096];
    static volatile String[] sOwner = new String[4096];
    static volatile String[] sName = new String[4096];
    static volatile String[] sDesc = new String[4096];
    /** The method id that stands for whatever native a site called (0 until one is called). */
    static volatile int[] sNative = new int[4096];
    static int sites = 1; // 0 is no site

    static final java.util.HashMap<String, Integer> SIGS = new java.util.HashMap<>();
    static final java.util.HashMap<String, Integer> METHODS = new java.util.HashMap<>();

    public static final int NATIVE = 1;
    public static final int SYNCHRONIZED = 2;
    static final int SITE_NATIVE = 4;
    public static final int INIT = 8;
    public static final int CLINIT = 16;

    /** A site whose invoke is invokedynamic: any entry but a class initializer is its. */
    static final int INDY = -2;

    // ---- the region
    static String out;
    static String benchmark;
    static String regionName;
    /** 0 harness, 1 main, 2 method. */
    static int regionKind;
    static String mainClass;
    static String marker;
    static String methodName;
    static volatile int mainMid = -1;
    static volatile int startMid = -1;
    static volatile int stopMid = -1;

    static volatile boolean tracking;
    static volatile boolean counting;
    static volatile boolean done;
    static volatile boolean begun;
    static volatile Thread owner;
    static TS ownerTs;
    static Node root;
    static int nodes;
    static Node[] allNodes = new Node[4096];
    static long regionStartNanos;
    static int regionStart;

    /** Where frames outside any counted region count: written by every thread, read by none. */
    static final TS SINK = new TS(null);

    static {
        SINK.c = new long[1 << 17];
        SINK.sink = true;
    }

    // ---- registration (the agent's transformer; the thread is busy)

    static int sig(String name, String desc) {
        String k = name + desc;
        Integer i = SIGS.get(k);
        if (i == null) {
            i = SIGS.size() + 1;
            SIGS.put(k, i);
        }
        return i;
    }

    public static int addClass(String name, byte[] bytes, ClassLoader loader) {
        synchronized (LOCK) {
            if (classes == cBytes.length) {
                cBytes = java.util.Arrays.copyOf(cBytes, classes * 2);
                cName = java.util.Arrays.copyOf(cName, classes * 2);
                cLoader = java.util.Arrays.copyOf(cLoader, classes * 2);
            }
            cBytes[classes] = bytes;
            cName[classes] = name;
            cLoader[classes] = loader;
            return classes++;
        }
    }

    static void growMethods() {
        int n = mClass.length * 2;
        mClass = java.util.Arrays.copyOf(mClass, n);
        mName = java.util.Arrays.copyOf(mName, n);
        mDesc = java.util.Arrays.copyOf(mDesc, n);
        mFlags = java.util.Arrays.copyOf(mFlags, n);
        mSig = java.util.Arrays.copyOf(mSig, n);
        mSlots = java.util.Arrays.copyOf(mSlots, n);
        mSegments = java.util.Arrays.copyOf(mSegments, n);
        mSlotOperands = java.util.Arrays.copyOf(mSlotOperands, n);
        mPcMap = java.util.Arrays.copyOf(mPcMap, n);
        mClassIndex = java.util.Arrays.copyOf(mClassIndex, n);
        mSite = java.util.Arrays.copyOf(mSite, n);
    }

    /** Fills method {@code id}'s entries (under LOCK, the arrays grown to hold it). */
    private static void fill(int id, int classIndex, String cls, String name, String desc, int flags,
            int[] segments, int[] slotOperands) {
        if (id >= mClass.length) {
            growMethods();
        }
        mClass[id] = cls;
        mName[id] = name;
        mDesc[id] = desc;
        mFlags[id] = flags | (name.equals("<init>") ? INIT : 0) | (name.equals("<clinit>") ? CLINIT : 0);
        mSig[id] = sig(name, desc);
        mSegments[id] = segments;
        mSlotOperands[id] = slotOperands;
        mSlots[id] = (segments == null ? 0 : segments.length) + (slotOperands == null ? 0 : slotOperands.length);
        mClassIndex[id] = classIndex;
    }

    /** A method id for whatever native site {@code s} calls: resolved from the site when written. */
    private static int addSiteNative(int s) {
        synchronized (LOCK) {
            int id = methods++;
            fill(id, -1, sOwner[s], sName[s], sDesc[s], SITE_NATIVE, null, null);
            mSite[id] = s;
            return id;
        }
    }

    /** A method whose code the agent rewrote, or a native (segments null). */
    public static int addMethod(int classIndex, String cls, String name, String desc, int flags,
            int[] segments, int[] slotOperands) {
        synchronized (LOCK) {
            String key = cls + "." + name + desc;
            Integer known = METHODS.get(key);
            // A class retransformed again (or defined by two loaders): its methods keep their ids.
            int id = known != null ? known : methods++;
            fill(id, classIndex, cls, name, desc, flags, segments, slotOperands);
            METHODS.put(key, id);
            if (regionKind != 0 && cls.equals(mainClass)) {
                if (regionKind == 1 && name.equals("main") && isMain(desc)) {
                    mainMid = id;
                } else if (regionKind == 2 && name.equals(methodName) && mainMid < 0) {
                    mainMid = id;
                }
            } else if (regionKind == 0 && cls.equals(mainClass) && name.equals("main") && isMain(desc)) {
                mainMid = id;
            }
            if (regionKind == 0 && cls.equals(marker) && desc.equals("()V")) {
                if (name.equals("start")) {
                    startMid = id;
                } else if (name.equals("stop")) {
                    stopMid = id;
                }
            }
            return id;
        }
    }

    /** The descriptors a main method may have (the program's String may be the tree's). */
    static String[] mains = {"([Ljava/lang/String;)V"};

    static boolean isMain(String desc) {
        for (String m : mains) {
            if (m.equals(desc)) {
                return true;
            }
        }
        return false;
    }

    public static void setPcMap(int mid, int[] map) {
        mPcMap[mid] = map;
    }

    public static int addSite(int mid, int pc, int op, String owner, String name, String desc) {
        synchronized (LOCK) {
            if (sites == sPc.length) {
                int n = sites * 2;
                sMethod = java.util.Arrays.copyOf(sMethod, n);
                sPc = java.util.Arrays.copyOf(sPc, n);
                sOp = java.util.Arrays.copyOf(sOp, n);
                sSig = java.util.Arrays.copyOf(sSig, n);
                sOwner = java.util.Arrays.copyOf(sOwner, n);
                sName = java.util.Arrays.copyOf(sName, n);
                sDesc = java.util.Arrays.copyOf(sDesc, n);
                sNative = java.util.Arrays.copyOf(sNative, n);
            }
            int id = sites++;
            sMethod[id] = mid;
            sPc[id] = pc;
            sOp[id] = op;
            sSig[id] = op == 0xba ? INDY : sig(name, desc);
            sOwner[id] = owner;
            sName[id] = name;
            sDesc[id] = desc;
            return id;
        }
    }

    // ---- threads

    static final Object THREADS = new Object();
    static Thread[] tKeys = new Thread[64];
    static TS[] tVals = new TS[64];
    static int tCount;

    /** This thread's state while calls are tracked; null when it has none yet and is not to get one. */
    static TS ts(boolean create) {
        Thread t = Thread.currentThread();
        if (t == owner) {
            return ownerTs;
        }
        synchronized (THREADS) {
            int n = tKeys.length;
            int i = (System.identityHashCode(t) & 0x7fffffff) % n;
            while (tKeys[i] != null) {
                if (tKeys[i] == t) {
                    return tVals[i];
                }
                i = (i + 1) % n;
            }
            if (!create) {
                return null;
            }
            if (tCount * 2 >= n) {
                Thread[] ok = tKeys;
                TS[] ov = tVals;
                tKeys = new Thread[n * 2];
                tVals = new TS[n * 2];
                tCount = 0;
                for (int j = 0; j < ok.length; j++) {
                    if (ok[j] != null) {
                        put(ok[j], ov[j]);
                    }
                }
            }
            TS ts = new TS(t);
            // Busy while its thread group is looked up (JDK code, which comes back here).
            ts.busy = true;
            put(t, ts);
            // The JVM's own threads (reference handling, cleaners, signals) are not
            // the program's: their work has no counterpart on JOP and follows the
            // host's timing.
            ts.sink = !programThread(t);
            ts.busy = false;
            return ts;
        }
    }

    /** Whether {@code t} is in the JVM's {@code main} thread group (or one below it). */
    static boolean programThread(Thread t) {
        for (ThreadGroup g = t.getThreadGroup(); g != null; g = g.getParent()) {
            if (g.getName().equals("main")) {
                return true;
            }
        }
        return false;
    }

    private static void put(Thread t, TS ts) {
        int n = tKeys.length;
        int i = (System.identityHashCode(t) & 0x7fffffff) % n;
        while (tKeys[i] != null) {
            i = (i + 1) % n;
        }
        tKeys[i] = t;
        tVals[i] = ts;
        tCount++;
    }

    /** Marks this thread busy (jopcal's own work); returns what {@link #resume} restores. */
    public static TS suspend() {
        TS ts = Thread.currentThread() == owner ? ownerTs : ts(false);
        if (ts == null || ts.busy) {
            return null;
        }
        ts.busy = true;
        return ts;
    }

    public static void resume(TS ts) {
        if (ts != null) {
            ts.busy = false;
        }
    }

    /** The region, from the agent's options; called before any class is rewritten. */
    public static void init(String out, String benchmark, String region, String main, String marker, String method,
            String mainDescriptors) {
        if (mainDescriptors != null) {
            Rt.mains = mainDescriptors.split("\\|");
        }
        Rt.out = out;
        Rt.benchmark = benchmark;
        Rt.regionName = region;
        Rt.regionKind = region.equals("harness") ? 0 : region.equals("main") ? 1 : 2;
        Rt.mainClass = main;
        Rt.marker = marker;
        Rt.methodName = method;
        // Loaded now, while nothing is rewritten: the hooks make these.
        new Node(null, 0, -1, 0);
        nodes = 0;
        new TS(null);
    }

    // ---- the hooks the rewritten code calls

    /** Entry of method {@code mid}: its frame's state (its counters are {@code ts.c}). */
    public static TS enter(int mid) {
        if (!tracking) {
            if (mid != mainMid || done) {
                return SINK;
            }
            beginTracking(mid);
            return ownerTs;
        }
        if (done) {
            return SINK;
        }
        if (mid == stopMid && counting && Thread.currentThread() == owner) {
            end(true, "");
            return SINK;
        }
        TS ts;
        Thread t = Thread.currentThread();
        if (t == owner) {
            ts = ownerTs;
        } else if (!counting) {
            return SINK;
        } else {
            ts = ts(true);
        }
        if (ts.busy || ts.sink) {
            return SINK;
        }
        Node parent = ts.depth > 0 ? ts.stack[ts.depth - 1] : null;
        int pc;
        int op;
        int s = ts.pending;
        boolean fresh = parent == null;
        if (fresh) {
            // A thread the region did not enter: its contexts hang under the
            // root. Its first frame's entry is not a call the region made
            // (the single-step agent, too, sees that frame only from its
            // first bytecode on).
            parent = root;
            pc = -1;
            op = 0;
            ts.pending = 0;
        } else if (s != 0) {
            pc = sPc[s];
            int sig = sSig[s];
            if (sig == mSig[mid] || (sig == INDY && (mFlags[mid] & CLINIT) == 0)) {
                op = sOp[s];
                ts.pending = 0;
            } else if ((mFlags[mid] & INIT) != 0 && THROWABLE.get(ts, mid)) {
                // An exception the invoke itself raised (a null receiver): no call happened.
                op = 0;
                ts.failed = s;
            } else if (NATIVE_SITE.get(ts, s)) {
                // Called back from inside the native method the invoke entered.
                parent = enterNative(ts, s);
                pc = -1;
                op = 0;
            } else {
                // The JVM entered this method while the invoke waits (a class initializer).
                op = 0;
            }
        } else {
            // The JVM entered this method on its own, at the caller's current bytecode.
            op = 0;
            pc = callerPc(ts, parent);
            if (pc >= 0 && (mFlags[mid] & INIT) != 0) {
                // An exception's constructor: the bytecode at pc raised it, and what
                // follows it in its segment did not run.
                parent.exit(pc, counting);
                ts.arrivalPc = pc;
            }
        }
        Node n = parent.child(pc, mid, op);
        // Entered by the JVM while an invoke of the caller waits (class loading
        // at its resolution): the invoke waits again once this frame is left.
        int waiting = op == 0 ? ts.pending : 0;
        ts.pending = 0;
        ts.push(n, waiting);
        if (counting && !fresh) {
            n.calls++;
        }
        if (ts == ownerTs) {
            ts.event(n.id + 2);
        }
        if ((mFlags[mid] & SYNCHRONIZED) != 0) {
            ts.held++;
        }
        return ts;
    }

    /** The original pc of the bytecode the caller's frame is at, read from the real stack. */
    static int callerPc(TS ts, Node parent) {
        ts.busy = true;
        try {
            int want = parent.mid;
            int[] found = {-1};
            StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).walk(s -> {
                // Past the run-time's own frames: the method entered, then its caller.
                s.dropWhile(f -> f.getDeclaringClass() == Rt.class).skip(1).findFirst().ifPresent(f -> {
                    String cls = f.getDeclaringClass().getName().replace('.', '/');
                    if (cls.equals(mClass[want]) && f.getMethodName().equals(mName[want])) {
                        int[] map = mPcMap[want];
                        int bci = f.getByteCodeIndex();
                        if (map != null && bci >= 0 && bci < map.length) {
                            found[0] = map[bci];
                        }
                    }
                });
                return null;
            });
            return found[0];
        } catch (Throwable e) {
            return -1;
        } finally {
            ts.busy = false;
        }
    }

    /** Return of the frame on top of {@code ts}. */
    public static void exit(TS ts) {
        if (ts.sink || ts.depth == 0) {
            return;
        }
        Node n = ts.pop();
        if ((mFlags[n.mid] & SYNCHRONIZED) != 0) {
            int cls = ts.release();
            if (counting) {
                n.operand(0xc3, cls);
            }
        }
        if (ts == ownerTs) {
            ts.event(0);
            if (n.mid == startMid && !begun) {
                beginRegion();
            } else if (ts.depth == 0 && counting && regionKind != 0) {
                end(true, "");
            } else if (ts.depth == 0 && counting) {
                end(false, "the method that called start() returned before stop() was called");
            }
        }
    }

    /** An exception, {@code t}, leaves the frame on top of {@code ts}. */
    public static void unwind(Throwable t, TS ts) {
        if (ts.sink || ts.depth == 0) {
            return;
        }
        int pc = arrivalPc(ts);
        settle(ts, 1);
        arrived(ts, t, pc, -1);
        Node n = ts.pop();
        // In the caller, the exception arose at the invoke of the frame left.
        ts.arrivalPc = n.pc;
        if ((mFlags[n.mid] & SYNCHRONIZED) != 0) {
            ts.release();
        }
        if (ts == ownerTs) {
            ts.event(1);
            if (ts.depth == 0 && counting) {
                end(false, regionKind != 0 ? "the region's method ended with an exception"
                        : "the method that called start() returned before stop() was called");
            }
        }
    }

    /** The handler at {@code handler} of the frame on top of {@code ts} was entered with {@code t}. */
    public static void caught(Throwable t, int handler, TS ts) {
        if (ts.sink || ts.depth == 0) {
            return;
        }
        int pc = arrivalPc(ts);
        settle(ts, 1);
        arrived(ts, t, pc, handler);
    }

    /**
     * Where the exception in flight arose in the top frame: at the invoke
     * still pending (its callee never ran, or was a native), else where the
     * frame's athrow, or its callee's unwind, said.
     */
    static int arrivalPc(TS ts) {
        int s = ts.pending;
        return s != 0 ? sPc[s] : ts.arrivalPc;
    }

    /** Per class thrown: its index in {@link #THROWN_NAMES}. */
    static final java.util.HashMap<Class<?>, Integer> THROWN = new java.util.HashMap<>();
    /** Per class thrown: its internal name and its superclasses'. */
    static final java.util.ArrayList<String[]> THROWN_NAMES = new java.util.ArrayList<>();
    /** The region's arrivals of exceptions: {node, pc, thrown, handler (-1: none)} and how many. */
    static final java.util.HashMap<java.util.List<Integer>, long[]> ARRIVALS = new java.util.HashMap<>();

    /** {@code t} arrived at {@code pc} in the top frame, which entered {@code handler} (-1: left it). */
    static void arrived(TS ts, Throwable t, int pc, int handler) {
        if (!counting || ts.busy || t == null) {
            return;
        }
        Node n = ts.stack[ts.depth - 1];
        // The maps are JDK code: not the program's.
        ts.busy = true;
        try {
            synchronized (ARRIVALS) {
                Integer k = THROWN.get(t.getClass());
                if (k == null) {
                    java.util.ArrayList<String> names = new java.util.ArrayList<>();
                    for (Class<?> c = t.getClass(); c != null; c = c.getSuperclass()) {
                        names.add(c.getName().replace('.', '/'));
                    }
                    k = THROWN_NAMES.size();
                    THROWN_NAMES.add(names.toArray(new String[0]));
                    THROWN.put(t.getClass(), k);
                }
                java.util.List<Integer> key = java.util.Arrays.asList(n.id, pc, k, handler);
                long[] c = ARRIVALS.get(key);
                if (c == null) {
                    c = new long[1];
                    ARRIVALS.put(key, c);
                }
                c[0]++;
            }
        } finally {
            ts.busy = false;
        }
    }

    /**
     * After every invoke. Its callee took the pending site (the common case)
     * unless it was a native (or unrewritten) method. Small enough for C1 to
     * inline: the common case is a field read and a branch.
     */
    public static void noEntry(TS ts) {
        if (ts.pending != 0) {
            pendingLeft(ts);
        }
    }

    /** An invoke returned and its site is still pending: a native (or unrewritten) method ran. */
    static void pendingLeft(TS ts) {
        if (ts.sink || ts.depth == 0) {
            ts.pending = 0;
            return;
        }
        settle(ts, 0);
    }

    /** The method id that stands for the native site {@code s} called. */
    static int nativeMid(TS ts, int s) {
        int mid = sNative[s];
        if (mid == 0) {
            boolean was = ts.busy;
            ts.busy = true;
            try {
                synchronized (LOCK) {
                    if (sNative[s] == 0) {
                        sNative[s] = addSiteNative(s);
                    }
                }
            } finally {
                ts.busy = was;
            }
            mid = sNative[s];
        }
        return mid;
    }

    /**
     * A yes-or-no fact per method or site id, worked out once, as jopcal's
     * own work (the thread busy: what it runs of the JDK is counted nowhere),
     * and kept.
     */
    abstract static class Memo {
        /** Per id: 0 not known yet, 1 yes, 2 no. */
        private volatile byte[] known = new byte[1024];

        abstract boolean work(TS ts, int id) throws Exception;

        final boolean get(TS ts, int id) {
            byte[] k = known;
            if (id < k.length && k[id] != 0) {
                return k[id] == 1;
            }
            boolean was = ts.busy;
            ts.busy = true;
            try {
                boolean yes;
                try {
                    yes = work(ts, id);
                } catch (Throwable e) {
                    yes = false;
                }
                synchronized (LOCK) {
                    if (id >= known.length) {
                        known = java.util.Arrays.copyOf(known, (id + 1) * 2);
                    }
                    known[id] = (byte) (yes ? 1 : 2);
                }
                return yes;
            } finally {
                ts.busy = was;
            }
        }
    }

    /** Whether a method's class is an exception's (its constructor then builds one). */
    static final Memo THROWABLE = new Memo() {
        @Override
        boolean work(TS ts, int mid) throws Exception {
            int ci = mClassIndex[mid];
            Class<?> c = Class.forName(mClass[mid].replace('/', '.'), false, ci >= 0 ? cLoader[ci] : null);
            return Throwable.class.isAssignableFrom(c);
        }
    };

    /** Whether the method a site names resolves to a native. */
    static final Memo NATIVE_SITE = new Memo() {
        @Override
        boolean work(TS ts, int s) {
            String[] r = sOp[s] == 0xba ? null : resolveNative(s);
            return r != null && r.length == 3 && (Integer.parseInt(r[2]) & NATIVE) != 0;
        }
    };

    /** The frame of the native site {@code s} called, entered now (or already on top). */
    static Node enterNative(TS ts, int s) {
        if (ts.nat[ts.depth - 1] == s) {
            return ts.stack[ts.depth - 1];
        }
        Node n = ts.stack[ts.depth - 1].child(sPc[s], nativeMid(ts, s), sOp[s]);
        if (counting) {
            n.calls++;
            if (ts.held == 0) {
                n.heldFree++;
            }
        }
        if (ts == ownerTs) {
            ts.event(n.id + 2);
        }
        ts.push(n, 0);
        ts.nat[ts.depth - 1] = s;
        return n;
    }

    /** Records the call of a native the pending site made (ended by return 0 or unwind 1), if any. */
    static void settle(TS ts, int how) {
        int s = ts.pending;
        ts.pending = 0;
        if (s == 0) {
            return;
        }
        if (ts.failed == s) {
            ts.failed = 0;
            return;
        }
        if (ts.nat[ts.depth - 1] == s) {
            // The native (which called back into Java) returns.
            ts.pop();
            ts.pending = 0;
            if (ts == ownerTs) {
                ts.event(how);
            }
            return;
        }
        int mid = nativeMid(ts, s);
        Node parent = ts.stack[ts.depth - 1];
        Node n = parent.child(sPc[s], mid, sOp[s]);
        if (counting) {
            n.calls++;
            if (ts.held == 0) {
                n.heldFree++;
            }
        }
        if (ts == ownerTs) {
            ts.event(n.id + 2);
            ts.event(how);
        }
    }

    public static void monitorEnter(TS ts) {
        if (!ts.sink) {
            ts.held++;
        }
    }

    public static void monitorExit(TS ts) {
        if (ts.sink || ts.depth == 0) {
            return;
        }
        int cls = ts.release();
        if (counting) {
            ts.stack[ts.depth - 1].operand(0xc3, cls);
        }
    }

    /**
     * A checkcast or instanceof (op) of an object an aload pushed: the path
     * JOP's routine takes against the class named (target), for the running
     * context; nothing for a null; as the single-step agent reads it.
     */
    public static void typeCheck(Object o, Class<?> target, TS ts, int op) {
        if (o == null || ts.sink || ts.busy || ts.depth == 0 || !counting) {
            return;
        }
        // As routed::type_check_operand: an interface; the steps up to the
        // class named; or a failed walk past them all.
        if (target.isInterface()) {
            ts.stack[ts.depth - 1].operand(op, TYPE_INTERFACE);
            return;
        }
        int walked = 0;
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass(), walked++) {
            if (c == target) {
                if (walked <= TYPE_STEPS_MAX) {
                    ts.stack[ts.depth - 1].operand(op, walked);
                }
                return;
            }
        }
        if (TYPE_FAILED + walked < TYPE_INTERFACE) {
            ts.stack[ts.depth - 1].operand(op, TYPE_FAILED + walked);
        }
    }

    /** The region's allocations: words in JOP's heap, and how many. */
    static final java.util.TreeMap<Integer, long[]> ALLOCATIONS = new java.util.TreeMap<>();
    /** Words of each class's own instance fields, from its class file, by internal name. */
    static final java.util.HashMap<String, Integer> OWN_WORDS = new java.util.HashMap<>();

    /** The agent read a class's file: its own instance fields take {@code words}. */
    public static void ownWords(String name, int words) {
        synchronized (OWN_WORDS) {
            OWN_WORDS.put(name, words);
        }
    }

    /**
     * Words of each class's instances in JOP's heap: its and its superclasses'
     * instance fields, two for a long or a double, as their class files declare
     * them (the single-step agent reads the same from JVMTI; reflection would
     * hide a few of the JDK's). A class whose file the agent never read (a
     * hidden class) is sized by reflection.
     */
    static final ClassValue<Integer> INSTANCE_WORDS = new ClassValue<Integer>() {
        @Override
        protected Integer computeValue(Class<?> c) {
            Integer own;
            synchronized (OWN_WORDS) {
                own = OWN_WORDS.get(c.getName().replace('.', '/'));
            }
            Class<?> sup = c.getSuperclass();
            return (own != null ? own : reflectedWords(c)) + (sup == null ? 0 : get(sup));
        }
    };

    static int reflectedWords(Class<?> k) {
        int w = 0;
        for (java.lang.reflect.Field f : k.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers())) {
                w += words(f.getType());
            }
        }
        return w;
    }

    /** Words a value of type {@code t} takes in JOP's heap: two for a long or a double, else one. */
    static int words(Class<?> t) {
        return t == long.class || t == double.class ? 2 : 1;
    }

    /**
     * A new of class c in a counted frame: its instance's words in JOP's heap
     * (its and its superclasses' fields, two for a long or a double), as the
     * single-step agent sizes the JVM's allocation event.
     */
    public static void allocObject(Class<?> c, TS ts) {
        if (!countsAllocations(ts)) {
            return;
        }
        // Working them out is jopcal's, not the program's.
        ts.busy = true;
        try {
            allocated(INSTANCE_WORDS.get(c));
        } finally {
            ts.busy = false;
        }
    }

    /** A newarray or anewarray of {@code length} elements of {@code elementWords} each, in a counted frame. */
    public static void allocArray(int length, int elementWords, TS ts) {
        if (length < 0 || !countsAllocations(ts)) {
            return;
        }
        ts.busy = true;
        try {
            allocated(length * elementWords);
        } finally {
            ts.busy = false;
        }
    }

    /**
     * A multianewarray's arrays: the one it returns and, through the
     * {@code dims} levels it filled, every array below (each a JOP
     * allocation of its own, as JOP's routine makes them).
     */
    public static void allocMulti(Object array, int dims, TS ts) {
        if (!countsAllocations(ts)) {
            return;
        }
        ts.busy = true;
        try {
            allocatedArrays(array, dims);
        } finally {
            ts.busy = false;
        }
    }

    /**
     * Whether what this thread allocates now is counted: in the region, in a
     * counted frame of the program's (not jopcal's work, not the host JVM's).
     */
    private static boolean countsAllocations(TS ts) {
        return counting && !ts.sink && !ts.busy && ts.depth > 0 && !ts.stack[ts.depth - 1].jvmWork;
    }

    static void allocatedArrays(Object array, int levels) {
        if (array == null || levels == 0) {
            return;
        }
        allocated(java.lang.reflect.Array.getLength(array) * words(array.getClass().getComponentType()));
        if (levels > 1 && array instanceof Object[]) {
            for (Object inner : (Object[]) array) {
                allocatedArrays(inner, levels - 1);
            }
        }
    }

    static void allocated(int words) {
        synchronized (ALLOCATIONS) {
            long[] n = ALLOCATIONS.get(words);
            if (n == null) {
                ALLOCATIONS.put(words, new long[] {1});
            } else {
                n[0]++;
            }
        }
    }

    /** jopcal_profile::routed's type check operands. */
    private static final int TYPE_STEPS_MAX = 127, TYPE_FAILED = 128, TYPE_INTERFACE = 255;

    /**
     * A putfield or putstatic (op) of a reference: whether the field held a
     * reference before the store (JOP's write barrier reads it only then),
     * for the running context, as the single-step agent reads it.
     */
    public static void oldRef(Object old, TS ts, int op) {
        if (ts.sink || ts.depth == 0 || !counting) {
            return;
        }
        ts.stack[ts.depth - 1].operand(op, old == null ? 0 : 1);
    }

    // ---- the pure bridge methods, run inline (Agent.inlined): the bytecode,
    // its operand observed for the frame that runs it (spec: opcode << 16 | mask)

    public static long lshl(long v, int n, TS ts, int spec) {
        observeHere(ts, spec >>> 16, n & (spec & 0xff));
        return v << n;
    }

    public static long lshr(long v, int n, TS ts, int spec) {
        observeHere(ts, spec >>> 16, n & (spec & 0xff));
        return v >> n;
    }

    public static long lushr(long v, int n, TS ts, int spec) {
        observeHere(ts, spec >>> 16, n & (spec & 0xff));
        return v >>> n;
    }

    public static int lcmp(long a, long b, TS ts, int spec) {
        observeHere(ts, spec >>> 16, compareClass(a, b));
        // Not Long.compare: the JDK's methods are rewritten, and a hook calls none.
        return a < b ? -1 : a == b ? 0 : 1;
    }

    /** {@code op}'s operand {@code value}, for the frame that runs it. */
    static void observeHere(TS ts, int op, int value) {
        if (counting && !ts.sink && ts.depth > 0) {
            ts.stack[ts.depth - 1].operand(op, value);
        }
    }

    /** lcmp's operands as the class JOP's microcode path depends on. */
    static int compareClass(long a, long b) {
        int order = a < b ? 0 : a == b ? 1 : 2;
        return 6 * (a < 0 ? 1 : 0) + 3 * (b < 0 ? 1 : 0) + order;
    }

    /** A bridge method's operand (a long shift's count; spec: opcode << 16 | mask) for its caller. */
    public static void observeCount(TS ts, int count, int spec) {
        if (ts.sink || ts.depth < 2 || !counting) {
            return;
        }
        ts.stack[ts.depth - 2].operand(spec >>> 16, count & (spec & 0xff));
    }

    /**
     * A bridge method's aastore: whether the slot it stores into held a
     * reference (JOP's write barrier reads the old one's state), for its
     * caller; nothing where the store will fail (the JVM's exception).
     */
    public static void observeElement(TS ts, Object[] array, int index, int opcode) {
        if (ts.sink || ts.depth < 2 || !counting || array == null || index < 0 || index >= array.length) {
            return;
        }
        ts.stack[ts.depth - 2].operand(opcode, array[index] == null ? 0 : 1);
    }

    /** A bridge method's lcmp operands, as the class JOP's microcode path depends on, for its caller. */
    public static void observeCompare(TS ts, long a, long b, int opcode) {
        if (ts.sink || ts.depth < 2 || !counting) {
            return;
        }
        ts.stack[ts.depth - 2].operand(opcode, compareClass(a, b));
    }

    // ---- the region's bounds

    static void beginTracking(int mid) {
        synchronized (LOCK) {
            if (tracking || done) {
                return;
            }
            TS ts = new TS(Thread.currentThread());
            ownerTs = ts;
            root = new Node(null, mid, -1, 0);
            ts.push(root, 0);
            owner = Thread.currentThread();
            tracking = true;
            if (regionKind != 0) {
                root.calls = 1;
                beginRegion();
            }
        }
    }

    static void beginRegion() {
        if (begun) {
            return;
        }
        begun = true;
        regionStart = ownerTs.events;
        // What ran while calls were only tracked is not the region's (no JDK call here: Rt is not busy).
        for (int i = 0; i < nodes; i++) {
            Node n = allNodes[i];
            long[] c = n.c;
            for (int k = 0; k < c.length; k++) {
                c[k] = 0;
            }
            n.calls = 0;
            n.heldFree = 0;
        }
        root.calls = 1;
        ownerTs.busy = true;
        regionStartNanos = now();
        ownerTs.busy = false;
        counting = true;
    }

    /**
     * Wall-clock nanoseconds, not from System: a program whose System's
     * clock methods are the tree's (which read the target's clock values,
     * in order) would see its values taken by the profiler.
     */
    public static long now() {
        java.time.Instant i = java.time.Instant.now();
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }

    /** Closes the region and writes what it counted. */
    static synchronized void end(boolean complete, String why) {
        if (done) {
            return;
        }
        counting = false;
        done = true;
        tracking = false;
        if (ownerTs != null) {
            ownerTs.busy = true;
        }
        long nanos = now() - regionStartNanos;
        try {
            write(complete, why, nanos);
        } catch (Throwable e) {
            System.err.println("jopcal-agent: cannot write " + out + ": " + e);
        }
    }

    /** Called at JVM exit: a region still open is written, marked incomplete. */
    public static void shutdown() {
        if (counting && !done) {
            end(false, "the JVM exited inside the region (System.exit, an uncaught exception or a fatal error)");
        } else if (!begun) {
            String what = regionKind == 0 ? "no call of " + marker + ".start() returned"
                    : mainClass + "." + (regionKind == 1 ? "main" : methodName) + " was never entered";
            System.err.println("jopcal-agent: the region never began: " + what);
        }
    }

    // ---- the raw profile

    static void str(DataOutputStream o, String s) throws IOException {
        byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        o.writeInt(b.length);
        o.write(b);
    }

    static void write(boolean complete, String why, long nanos) throws IOException {
        if (!complete) {
            System.err.println("jopcal-agent: " + why + "; the profile written is marked incomplete");
        }
        File dest = new File(out);
        File tmp = new File(out + ".partial");
        int n = nodes;
        // The methods the nodes name, in first-use order, and the classes that hold their code.
        int[] methodOut = new int[methods];
        java.util.Arrays.fill(methodOut, -1);
        int[] mOrder = new int[methods];
        int mCount = 0;
        for (int i = 0; i < n; i++) {
            int m = allNodes[i].mid;
            if (methodOut[m] < 0) {
                methodOut[m] = mCount;
                mOrder[mCount++] = m;
            }
        }
        String[] wClass = new String[mCount];
        String[] wDesc = new String[mCount];
        int[] wFlags = new int[mCount];
        int[] wClassIndex = new int[mCount];
        int[] classOut = new int[Math.max(classes, 1)];
        java.util.Arrays.fill(classOut, -1);
        int[] cOrder = new int[Math.max(classes, 1)];
        int cCount = 0;
        for (int i = 0; i < mCount; i++) {
            int m = mOrder[i];
            wClass[i] = mClass[m];
            wDesc[i] = mDesc[m];
            wFlags[i] = mFlags[m];
            int ci = mClassIndex[m];
            if ((mFlags[m] & SITE_NATIVE) != 0) {
                // A site's native: the method it named, as resolved from the class it names.
                String[] r = resolveNative(mSite[m]);
                wClass[i] = r[0];
                wDesc[i] = r[1];
                wFlags[i] = Integer.parseInt(r[2]);
                // Its class's code, where the agent kept it (Object, for its constructor).
                ci = -1;
                for (int k = 0; k < classes; k++) {
                    if (cName[k].equals(wClass[i])) {
                        ci = k;
                    }
                }
            }
            if (ci >= 0 && classOut[ci] < 0) {
                classOut[ci] = cCount;
                cOrder[cCount++] = ci;
            }
            wClassIndex[i] = ci >= 0 ? classOut[ci] : -1;
        }
        try (DataOutputStream o = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(tmp), 1 << 16))) {
            o.writeBytes("JOPCALR\n");
            o.writeInt(3);
            o.writeByte(complete ? 1 : 0);
            str(o, why);
            str(o, benchmark);
            str(o, regionName);
            o.writeLong(nanos);
            o.writeInt(cCount);
            for (int i = 0; i < cCount; i++) {
                str(o, cName[cOrder[i]]);
                byte[] b = cBytes[cOrder[i]];
                o.writeInt(b.length);
                o.write(b);
            }
            o.writeInt(mCount);
            for (int i = 0; i < mCount; i++) {
                int m = mOrder[i];
                o.writeInt(wClassIndex[i]);
                str(o, wClass[i]);
                str(o, mName[m]);
                str(o, wDesc[i]);
                o.writeByte(wFlags[i] & (NATIVE | SYNCHRONIZED));
                int[] seg = mSegments[m];
                o.writeInt(seg == null ? 0 : seg.length);
                if (seg != null) {
                    for (int pc : seg) {
                        o.writeInt(pc);
                    }
                }
                int[] ops = mSlotOperands[m];
                o.writeInt(ops == null ? 0 : ops.length);
                if (ops != null) {
                    for (int v : ops) {
                        o.writeInt(v);
                    }
                }
            }
            o.writeInt(n);
            for (int i = 0; i < n; i++) {
                Node x = allNodes[i];
                o.writeInt(x.parent == null ? -1 : x.parent.id);
                o.writeInt(methodOut[x.mid]);
                o.writeInt(x.pc);
                o.writeByte(x.op);
                o.writeLong(x.calls);
                o.writeLong(x.heldFree);
                long[] c = x.c;
                o.writeInt(c.length);
                for (long v : c) {
                    o.writeLong(v);
                }
                for (Node.Tally t : new Node.Tally[] {x.exits, x.operands}) {
                    o.writeInt(t.size);
                    for (int k = 0; k < t.size; k++) {
                        o.writeInt(t.keys[k]);
                        o.writeLong(t.counts[k]);
                    }
                }
            }
            o.writeInt(regionStart);
            TS ts = ownerTs;
            o.writeInt(ts == null ? 0 : ts.events);
            for (int i = 0; ts != null && i < ts.events; i++) {
                o.writeInt(ts.ev[i]);
            }
            synchronized (ALLOCATIONS) {
                o.writeInt(ALLOCATIONS.size());
                for (java.util.Map.Entry<Integer, long[]> e : ALLOCATIONS.entrySet()) {
                    o.writeInt(e.getKey());
                    o.writeLong(e.getValue()[0]);
                }
            }
            synchronized (ARRIVALS) {
                o.writeInt(THROWN_NAMES.size());
                for (String[] names : THROWN_NAMES) {
                    o.writeInt(names.length);
                    for (String name : names) {
                        str(o, name);
                    }
                }
                o.writeInt(ARRIVALS.size());
                for (java.util.Map.Entry<java.util.List<Integer>, long[]> e : ARRIVALS.entrySet()) {
                    for (int v : e.getKey()) {
                        o.writeInt(v);
                    }
                    o.writeLong(e.getValue()[0]);
                }
            }
        }
        if (!tmp.renameTo(dest)) {
            throw new IOException("cannot rename " + tmp + " to " + dest);
        }
    }

    /** {class, descriptor, flags} of the native site {@code site} called, resolved from the class it names. */
    static String[] resolveNative(int site) {
        String owner = sOwner[site];
        String desc = sDesc[site];
        String name = sName[site];
        if (name.equals("<init>")) {
            // invokespecial names the constructor exactly.
            return new String[] {owner, desc, "0"};
        }
        try {
            int ci = mClassIndex[sMethod[site]];
            ClassLoader loader = ci >= 0 ? cLoader[ci] : null;
            Class<?> c = Class.forName(owner.replace('/', '.'), false, loader);
            for (Class<?> k = c; k != null; k = k.getSuperclass()) {
                for (Method x : k.getDeclaredMethods()) {
                    if (x.getName().equals(name) && descriptor(x).equals(desc)) {
                        if (Modifier.isNative(x.getModifiers())) {
                            return found(k, x, desc);
                        }
                        break;
                    }
                }
            }
            // A virtual call the receiver's class answered with a native of
            // its own (File.length on a UnixFileSystem): the loaded class
            // below the named one that declares it.
            Class<?>[] all = loaded == null ? new Class<?>[0] : loaded.get();
            java.util.Arrays.sort(all, (x, y) -> x.getName().compareTo(y.getName()));
            for (Class<?> k : all) {
                if (k == c || !c.isAssignableFrom(k)) {
                    continue;
                }
                for (Method x : k.getDeclaredMethods()) {
                    if (Modifier.isNative(x.getModifiers()) && x.getName().equals(name) && descriptor(x).equals(desc)) {
                        return found(k, x, desc);
                    }
                }
            }
        } catch (Throwable e) {
            // Left as the site names it.
        }
        // Left as the site names it (the fourth entry says it is not resolved).
        return new String[] {owner, desc, "1", "?"};
    }

    /** Every loaded class (set by the agent). */
    public static java.util.function.Supplier<Class<?>[]> loaded;

    static String[] found(Class<?> k, Method x, String desc) {
        int f = (Modifier.isNative(x.getModifiers()) ? NATIVE : 0)
                | (Modifier.isSynchronized(x.getModifiers()) ? SYNCHRONIZED : 0);
        return new String[] {k.getName().replace('.', '/'), desc, Integer.toString(f)};
    }

    static String descriptor(Method m) {
        StringBuilder b = new StringBuilder("(");
        for (Class<?> p : m.getParameterTypes()) {
            b.append(p.descriptorString());
        }
        return b.append(')').append(m.getReturnType().descriptorString()).toString();
    }

    static synchronized void register(Node n) {
        if (nodes == allNodes.length) {
            Node[] a = new Node[nodes * 2];
            System.arraycopy(allNodes, 0, a, 0, nodes);
            allNodes = a;
        }
        n.id = nodes;
        allNodes[nodes++] = n;
    }
}
