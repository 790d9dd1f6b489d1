package jopcal.prof;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Type;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.FieldNode;
import org.objectweb.asm.tree.FrameNode;
import org.objectweb.asm.tree.InsnList;
import org.objectweb.asm.tree.InsnNode;
import org.objectweb.asm.tree.IntInsnNode;
import org.objectweb.asm.tree.InvokeDynamicInsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MultiANewArrayInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;
import org.objectweb.asm.tree.TryCatchBlockNode;
import org.objectweb.asm.tree.TypeInsnNode;
import org.objectweb.asm.tree.VarInsnNode;

/**
 * jopcal's instrumenting profiler, loaded with {@code -javaagent}: every
 * class, the JDK's included, is rewritten with ASM as it loads (those
 * loaded before the agent are retransformed) so that it counts its own
 * bytecodes into {@link Rt}'s calling-context tree.
 *
 * A method's original code is cut into segments: straight runs that start
 * at a branch target, a handler, or after a branch, a return, a throw or an
 * invoke. Each segment gets one counter, incremented where it starts; a
 * segment's every bytecode ran as often as its first, except where an
 * implicit exception (a null pointer, an array index) left it early, which
 * {@link Rt} records with the pc. Invokes end segments, so an exception a
 * callee throws leaves at a segment's end. The rewritten method also
 * enters and leaves its context (returns, and a handler for everything
 * that unwinds it), names each invoke's site before it runs (so that the
 * callee's context knows its call site, and a native callee, which has no
 * code to rewrite, is seen by the site staying pending), notes the pc of
 * each athrow and hands each exception a handler or the unwind receives to
 * {@link Rt} (where it arrived, for JOP's search of the exception tables),
 * tracks monitors,
 * counts each lookupswitch arm apart (how many cases JOP's routine
 * compares), and reads the operands of jopcal's bridge methods.
 *
 * The original class file is kept with the counts: jopcal reads the exact
 * bytecodes (iload_0 apart from iload 0, ldc from ldc_w) from it.
 */
public final class Agent implements ClassFileTransformer {
    static final String RT = "jopcal/prof/Rt";
    static final String TS_TYPE = "jopcal/prof/TS";
    static final String TS_DESC = "Ljopcal/prof/TS;";
    /** Marks a segment that starts at an exception handler. */
    static final int HANDLER = 1 << 31;
    /** The default arm of a switch whose arms are per case. */
    static final int DEFAULT_ARM = -2;

    /** Bridge methods whose operand is observed: name -> {opcode, slot (-1: two longs), mask}. */
    final Map<String, int[]> observed = new HashMap<>();
    String bridge = "";
    static boolean verbose;
    /**
     * Only the region's wall time: only the main and marker classes are
     * rewritten (the region's bounds), nothing else is counted. The baseline
     * the profilers' region times are compared with: the same program, the
     * same JVM options, no profiler's work.
     */
    static boolean clockOnly;
    static String mainClass = "";
    static String markerClass = "";
    /** A directory where the rewritten classes are kept (for looking at them with javap). */
    static String dump;
    /**
     * Loaded with this class, before the transformer is added, so that the
     * retransformation of the classes loaded at start-up rewrites them: a
     * class first loaded while a transformer runs (the exception a rewrite
     * throws when it cannot rewrite a class) is never rewritten, and a
     * program that uses it would go uncounted there.
     */
    static final Class<?>[] THROWN_BY_THE_REWRITE = {IllegalStateException.class};

    public static void premain(String args, Instrumentation inst) throws Exception {
        Map<String, String> o = new HashMap<>();
        for (String kv : args.split(",")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                o.put(kv.substring(0, eq), kv.substring(eq + 1).replace("%2C", ",").replace("%25", "%"));
            } else if (!kv.isEmpty()) {
                o.put(kv, ""); // a flag: verbose, clock-only
            }
        }
        String region = o.getOrDefault("region", "harness");
        String main = o.get("main");
        if (main == null) {
            System.err.println("jopcal-agent: bad options `" + args + "`: the instrumenting profiler needs main=");
            System.exit(1);
        }
        Rt.init(o.get("out"), o.getOrDefault("bench", "?"), region, main,
                o.getOrDefault("marker", "jopcal/harness/Harness"), o.getOrDefault("method", ""), o.get("mains"));
        verbose = o.containsKey("verbose");
        clockOnly = o.containsKey("clock-only");
        mainClass = main;
        markerClass = o.getOrDefault("marker", "jopcal/harness/Harness");
        dump = o.get("keep-rewritten");
        Agent a = new Agent();
        // observe=<class>;<name>:<opcode>:<slot>:<mask>;... (slot -1: an lcmp's two longs;
        // -2: the element an aastore replaces, of the array in slot 0 at the index in slot 1)
        String obs = o.get("observe");
        if (obs != null && !obs.isEmpty()) {
            String[] parts = obs.split(";");
            a.bridge = parts[0];
            for (int i = 1; i < parts.length; i++) {
                String[] f = parts[i].split(":");
                a.observed.put(f[0], new int[] {Integer.parseInt(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3])});
            }
        }
        // Object is not rewritten (its constructor runs inside the hooks); its
        // constructor's one return is counted from the call sites that name it.
        try (java.io.InputStream in = Object.class.getResourceAsStream("Object.class")) {
            Rt.addClass("java/lang/Object", in.readAllBytes(), null);
        }
        Rt.ownWords("java/lang/Object", 0);
        // Resolved now through the application's class loader, so that the
        // rewritten classes' first use of them asks no class loader's Java
        // code (which the profile would count) for them.
        String[] ours = {"jopcal.prof.Rt", "jopcal.prof.TS", "jopcal.prof.Agent"};
        for (String c : ours) {
            Class.forName(c, false, ClassLoader.getSystemClassLoader());
        }
        forget(inst, ours);
        Rt.loaded = inst::getAllLoadedClasses;
        // Loaded now: the region's clock.
        Rt.now();
        inst.addTransformer(a, true);
        if (clockOnly) {
            Runtime.getRuntime().addShutdownHook(new Thread(Rt::shutdown, "jopcal-profile-writer"));
            return;
        }
        List<Class<?>> loaded = new ArrayList<>();
        for (Class<?> c : inst.getAllLoadedClasses()) {
            if (inst.isModifiableClass(c) && !c.isArray() && !c.isPrimitive()
                    && !excluded(c.getName().replace('.', '/'))) {
                loaded.add(c);
            }
        }
        try {
            inst.retransformClasses(loaded.toArray(new Class<?>[0]));
        } catch (Throwable e) {
            for (Class<?> c : loaded) {
                try {
                    inst.retransformClasses(c);
                } catch (Throwable f) {
                    if (verbose) {
                        System.err.println("jopcal-agent: not rewritten: " + c.getName() + ": " + f);
                    }
                }
            }
        }
        Runtime.getRuntime().addShutdownHook(new Thread(Rt::shutdown, "jopcal-profile-writer"));
    }

    /**
     * Removes the class-loading locks the loaders made for jopcal's own
     * classes (all on the boot class path, found by delegation): the
     * program's class loading then goes through the same lock maps as
     * without the profiler, and takes the same paths.
     */
    static void forget(Instrumentation inst, String[] names) {
        try {
            Module base = Object.class.getModule();
            inst.redefineModule(base, java.util.Set.of(), java.util.Map.of(),
                    java.util.Map.of("java.lang", java.util.Set.of(Agent.class.getModule())),
                    java.util.Set.of(), java.util.Map.of());
            java.lang.reflect.Field f = ClassLoader.class.getDeclaredField("parallelLockMap");
            f.setAccessible(true);
            for (ClassLoader l = ClassLoader.getSystemClassLoader(); l != null; l = l.getParent()) {
                Object map = f.get(l);
                if (map instanceof Map) {
                    for (String n : names) {
                        ((Map<?, ?>) map).remove(n);
                    }
                }
            }
        } catch (Throwable e) {
            if (verbose) {
                System.err.println("jopcal-agent: the class-loading locks of jopcal's classes stay: " + e);
            }
        }
    }

    /**
     * Reference.get, which HotSpot's interpreter runs by an entry of its own
     * that reports no method entry to JVMTI: the single-step profiler never
     * sees it, so it is not rewritten and not a call here either. (Calls
     * that name it through WeakReference or PhantomReference reach it too;
     * SoftReference has a get of its own.)
     */
    static boolean unseen(String owner, String name, String desc) {
        return name.equals("get") && desc.equals("()Ljava/lang/Object;")
                && (owner.equals("java/lang/ref/Reference") || owner.equals("java/lang/ref/WeakReference")
                        || owner.equals("java/lang/ref/PhantomReference"));
    }

    /**
     * The observed operand of {@code mi} ({opcode, slot, mask}) where it calls
     * a pure bridge method (a long shift or lcmp: no exception, no call of
     * its own) that the rewrite runs inline; null for any other call.
     */
    int[] inlined(MethodInsnNode mi) {
        if (!mi.owner.equals(bridge)) {
            return null;
        }
        int[] obs = observed.get(mi.name);
        boolean pure = obs != null && (obs[1] >= 0 && mi.desc.equals("(JI)J") || obs[1] == -1 && mi.desc.equals("(JJ)I"));
        return pure ? obs : null;
    }

    static boolean excluded(String name) {
        return name.startsWith("jopcal/prof/") || name.startsWith("org/objectweb/asm/")
                || (name.startsWith("sun/instrument/") && !name.equals(HOOK)) || name.equals("java/lang/Object");
    }

    /** The class whose transform method the JVM calls for every class it loads. */
    static final String HOOK = "sun/instrument/InstrumentationImpl";

    /**
     * The JVM's way into the transformers, rewritten so that what it runs
     * (the JDK methods it calls before this agent's transform) counts
     * nowhere: without the profiler it would not run at all.
     */
    static byte[] guard(byte[] bytes) {
        ClassReader r = new ClassReader(bytes);
        ClassNode cn = new ClassNode();
        r.accept(cn, ClassReader.SKIP_FRAMES);
        for (MethodNode m : cn.methods) {
            if (!m.name.equals("transform") || m.instructions.size() == 0) {
                continue;
            }
            int was = m.maxLocals;
            InsnList insns = m.instructions;
            for (AbstractInsnNode i = insns.getFirst(); i != null; i = i.getNext()) {
                if (isReturn(i.getOpcode())) {
                    InsnList l = new InsnList();
                    l.add(new VarInsnNode(Opcodes.ALOAD, was));
                    l.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "resume", "(" + TS_DESC + ")V", false));
                    insns.insertBefore(i, l);
                }
            }
            InsnList entry = new InsnList();
            entry.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "suspend", "()" + TS_DESC, false));
            entry.add(new VarInsnNode(Opcodes.ASTORE, was));
            LabelNode begin = new LabelNode();
            entry.add(begin);
            insns.insert(entry);
            LabelNode end = new LabelNode();
            LabelNode handler = new LabelNode();
            insns.add(end);
            insns.add(handler);
            insns.add(new VarInsnNode(Opcodes.ALOAD, was));
            insns.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "resume", "(" + TS_DESC + ")V", false));
            insns.add(new InsnNode(Opcodes.ATHROW));
            m.tryCatchBlocks.add(new TryCatchBlockNode(begin, end, handler, null));
            m.localVariables = null;
            m.maxLocals += 1;
        }
        ClassWriter w = new ClassWriter(r, ClassWriter.COMPUTE_MAXS);
        cn.accept(w);
        return w.toByteArray();
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefined,
            ProtectionDomain domain, byte[] bytes) {
        TS was = Rt.suspend();
        try {
            if (name == null || excluded(name) || (clockOnly && !name.equals(mainClass) && !name.equals(markerClass))) {
                return null;
            }
            if (name.equals(HOOK)) {
                return guard(bytes);
            }
            return rewrite(loader, name, bytes);
        } catch (Throwable e) {
            if (verbose) {
                System.err.println("jopcal-agent: not rewritten: " + name + ": " + e);
            }
            return null;
        } finally {
            Rt.resume(was);
        }
    }

    byte[] rewrite(ClassLoader loader, String name, byte[] bytes) {
        Map<String, byte[]> codes = ClassBytes.codes(bytes);
        ClassReader r = new ClassReader(bytes);
        ClassNode cn = new ClassNode();
        r.accept(cn, ClassReader.EXPAND_FRAMES);
        int classIndex = Rt.addClass(name, bytes, loader);
        Rt.ownWords(name, instanceWords(cn));
        List<Runnable> after = new ArrayList<>();
        for (MethodNode m : cn.methods) {
            if ((m.access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_NATIVE)) != 0 || m.instructions.size() == 0
                    || unseen(name, m.name, m.desc)) {
                continue;
            }
            byte[] code = codes.get(m.name + m.desc);
            if (code == null) {
                throw new IllegalStateException("no Code attribute for " + m.name + m.desc);
            }
            after.add(method(classIndex, cn, m, code));
        }
        // Given the reader, the writer starts from the class's own constant
        // pool and appends to it: a retransformed class (the JDK's, loaded
        // before the agent) then keeps every old entry at its index, where
        // the JVM's merge of the old and new pools finds it at once; an entry
        // elsewhere is searched for through the whole old pool (11% of a
        // profiling JVM's start-up in perf before; only the hooks' new
        // entries are searched now).
        ClassWriter w = new ClassWriter(r, ClassWriter.COMPUTE_MAXS);
        cn.accept(w);
        byte[] out = w.toByteArray();
        if (dump != null) {
            try {
                java.nio.file.Path f = java.nio.file.Paths.get(dump, name + ".class");
                java.nio.file.Files.createDirectories(f.getParent());
                java.nio.file.Files.write(f, out);
            } catch (java.io.IOException e) {
                System.err.println("jopcal-agent: cannot keep the rewritten " + name + ": " + e);
            }
        }
        for (Runnable a : after) {
            a.run();
        }
        return out;
    }

    /** Words of a class's own instance fields in JOP's heap: one each, two for a long or a double. */
    static int instanceWords(ClassNode cn) {
        int w = 0;
        for (FieldNode f : cn.fields) {
            if ((f.access & Opcodes.ACC_STATIC) == 0) {
                w += f.desc.equals("J") || f.desc.equals("D") ? 2 : 1;
            }
        }
        return w;
    }

    static void push(InsnList l, int v) {
        if (v >= -1 && v <= 5) {
            l.add(new InsnNode(Opcodes.ICONST_0 + v));
        } else if (v >= Byte.MIN_VALUE && v <= Byte.MAX_VALUE) {
            l.add(new IntInsnNode(Opcodes.BIPUSH, v));
        } else if (v >= Short.MIN_VALUE && v <= Short.MAX_VALUE) {
            l.add(new IntInsnNode(Opcodes.SIPUSH, v));
        } else {
            l.add(new LdcInsnNode(v));
        }
    }

    static InsnList counter(int cVar, int slot) {
        InsnList l = new InsnList();
        l.add(new VarInsnNode(Opcodes.ALOAD, cVar));
        push(l, slot);
        l.add(new InsnNode(Opcodes.DUP2));
        l.add(new InsnNode(Opcodes.LALOAD));
        l.add(new InsnNode(Opcodes.LCONST_1));
        l.add(new InsnNode(Opcodes.LADD));
        l.add(new InsnNode(Opcodes.LASTORE));
        return l;
    }

    static InsnList hook(int tsVar, String method) {
        InsnList l = new InsnList();
        l.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
        l.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, method, "(" + TS_DESC + ")V", false));
        return l;
    }

    /**
     * A lookupswitch's recorded operand (jopcal_profile::routed::lookupswitch_operand):
     * a match after compares comparisons as compares (at most 127), the
     * default after them as 128 + compares (at most 255).
     */
    static int switchOperand(int compares, boolean matched) {
        return matched ? Math.min(compares, 127) : Math.min(128 + compares, 255);
    }

    /** A field descriptor of a reference (an object or an array). */
    static boolean isReference(String desc) {
        return desc.startsWith("L") || desc.startsWith("[");
    }

    static boolean isReturn(int op) {
        return op >= Opcodes.IRETURN && op <= Opcodes.RETURN;
    }

    static boolean isInvoke(int op) {
        return op >= Opcodes.INVOKEVIRTUAL && op <= Opcodes.INVOKEDYNAMIC;
    }

    /** Rewrites {@code m}; returns what to do once its class is written (its pc map). */
    Runnable method(int classIndex, ClassNode cn, MethodNode m, byte[] code) {
        String owner = cn.name;
        // Class files from version 50 on carry stack map frames, which the
        // verifier checks: every frame gets the rewrite's two locals, and
        // the code the rewrite adds at a jump target or handler gets one.
        boolean frames = (cn.version & 0xffff) >= 50;
        InsnList insns = m.instructions;
        // Each real instruction's original pc.
        IdentityHashMap<AbstractInsnNode, Integer> pcOf = new IdentityHashMap<>();
        List<AbstractInsnNode> real = new ArrayList<>();
        int pc = 0;
        boolean framed = false;
        boolean jumps = !m.tryCatchBlocks.isEmpty();
        for (AbstractInsnNode i = insns.getFirst(); i != null; i = i.getNext()) {
            if (i.getOpcode() < 0) {
                framed |= i instanceof FrameNode;
                continue;
            }
            jumps |= i instanceof JumpInsnNode || i instanceof TableSwitchInsnNode || i instanceof LookupSwitchInsnNode;
            if (pc >= code.length) {
                throw new IllegalStateException(m.name + ": more instructions than code");
            }
            int op = code[pc] & 0xff;
            if (op == 0xc4) {
                op = code[pc + 1] & 0xff; // wide: ASM reads the instruction it widens
            }
            int want = i.getOpcode();
            if (op != want && !ClassBytes.sameFamily(op, want)) {
                throw new IllegalStateException(m.name + ": pc " + pc + " holds " + op + ", ASM read " + want);
            }
            pcOf.put(i, pc);
            real.add(i);
            pc += ClassBytes.length(code, pc);
        }
        if (pc != code.length) {
            throw new IllegalStateException(m.name + ": code and instructions differ in length");
        }
        // A class the JVM does not verify (the boot loader's, parsed without
        // class data sharing) comes back to a retransformation without its
        // stack maps: its methods jump with no frame, and their rewrite adds
        // none either (nothing checks them).
        if (jumps && !framed) {
            frames = false;
        }
        // Segment leaders.
        IdentityHashMap<AbstractInsnNode, Boolean> leader = new IdentityHashMap<>();
        IdentityHashMap<AbstractInsnNode, Boolean> handler = new IdentityHashMap<>();
        leader.put(real.get(0), true);
        for (TryCatchBlockNode t : m.tryCatchBlocks) {
            AbstractInsnNode h = firstReal(t.handler);
            if (h != null) {
                leader.put(h, true);
                handler.put(h, true);
            }
        }
        for (int k = 0; k < real.size(); k++) {
            AbstractInsnNode i = real.get(k);
            int op = i.getOpcode();
            List<LabelNode> targets = new ArrayList<>();
            if (i instanceof JumpInsnNode) {
                targets.add(((JumpInsnNode) i).label);
            } else if (i instanceof TableSwitchInsnNode) {
                targets.add(((TableSwitchInsnNode) i).dflt);
                targets.addAll(((TableSwitchInsnNode) i).labels);
            } else if (i instanceof LookupSwitchInsnNode) {
                targets.add(((LookupSwitchInsnNode) i).dflt);
                targets.addAll(((LookupSwitchInsnNode) i).labels);
            }
            for (LabelNode t : targets) {
                AbstractInsnNode f = firstReal(t);
                if (f != null) {
                    leader.put(f, true);
                }
            }
            boolean ends = i instanceof JumpInsnNode || i instanceof TableSwitchInsnNode
                    || i instanceof LookupSwitchInsnNode || isReturn(op) || op == Opcodes.ATHROW
                    || op == Opcodes.RET || isInvoke(op);
            if (ends && k + 1 < real.size()) {
                leader.put(real.get(k + 1), true);
            }
        }
        List<Integer> segments = new ArrayList<>();
        IdentityHashMap<AbstractInsnNode, Integer> slotOf = new IdentityHashMap<>();
        for (AbstractInsnNode i : real) {
            if (leader.containsKey(i)) {
                slotOf.put(i, segments.size());
                // A handler's segment is marked: its count is the catches there.
                segments.add(pcOf.get(i) | (handler.containsKey(i) ? HANDLER : 0));
            }
        }
        // lookupswitch arms: one slot per distinct target of each switch, or,
        // where an iload pushed the key (switch (local), as the single-step
        // agent reads it), one per case, which tells apart cases that share a
        // target (JOP's routine compares up to the key's case).
        List<Integer> slotOperands = new ArrayList<>();
        List<Object[]> arms = new ArrayList<>(); // {switch, target label, slot, case or -1}
        for (int k = 0; k < real.size(); k++) {
            AbstractInsnNode i = real.get(k);
            if (i instanceof LookupSwitchInsnNode) {
                LookupSwitchInsnNode s = (LookupSwitchInsnNode) i;
                boolean keyed = k > 0 && real.get(k - 1).getOpcode() == Opcodes.ILOAD;
                if (keyed) {
                    int n = s.labels.size();
                    for (int j = 0; j <= n; j++) {
                        int slot = segments.size() + slotOperands.size();
                        slotOperands.add(0xab << 8 | switchOperand(j < n ? j + 1 : n, j < n));
                        arms.add(new Object[] {s, j < n ? s.labels.get(j) : s.dflt, slot, j < n ? j : DEFAULT_ARM});
                    }
                    continue;
                }
                List<LabelNode> distinct = new ArrayList<>();
                for (LabelNode l : s.labels) {
                    if (!distinct.contains(l)) {
                        distinct.add(l);
                    }
                }
                if (!distinct.contains(s.dflt)) {
                    distinct.add(s.dflt);
                }
                for (LabelNode t : distinct) {
                    int j = s.labels.indexOf(t);
                    int operand = switchOperand(j >= 0 ? j + 1 : s.labels.size(), j >= 0);
                    int slot = segments.size() + slotOperands.size();
                    slotOperands.add(0xab << 8 | operand);
                    arms.add(new Object[] {s, t, slot, -1});
                }
            }
        }
        int flags = ((m.access & Opcodes.ACC_SYNCHRONIZED) != 0 ? Rt.SYNCHRONIZED : 0);
        int mid = Rt.addMethod(classIndex, owner, m.name, m.desc, flags, toArray(segments), toArray(slotOperands));
        int tsVar = m.maxLocals;
        int cVar = m.maxLocals + 1;
        if (frames) {
            for (AbstractInsnNode i = insns.getFirst(); i != null; i = i.getNext()) {
                if (i instanceof FrameNode) {
                    FrameNode f = (FrameNode) i;
                    f.local = withOurs(f.local, m.maxLocals);
                }
            }
        }
        // checkcast and instanceof of an object an aload pushed (the
        // single-step agent reads it from the local), of a class, not an
        // array. The class named goes to Rt.typeCheck as a constant, which a
        // class file older than Java 5 cannot hold (its checks go unrecorded).
        IdentityHashMap<AbstractInsnNode, Boolean> tested = new IdentityHashMap<>();
        boolean classConstants = (cn.version & 0xffff) >= 49;
        for (int k = 1; classConstants && k < real.size(); k++) {
            AbstractInsnNode i = real.get(k);
            if ((i.getOpcode() == Opcodes.CHECKCAST || i.getOpcode() == Opcodes.INSTANCEOF)
                    && real.get(k - 1).getOpcode() == Opcodes.ALOAD
                    && !((TypeInsnNode) i).desc.startsWith("[")) {
                tested.put(i, true);
            }
        }
        // Stores of references: the field's old reference (see Rt.oldRef); in
        // a constructor, before its super() call, the object is not yet one
        // whose fields may be read, and its fields hold none.
        IdentityHashMap<AbstractInsnNode, Boolean> stores = new IdentityHashMap<>();
        AbstractInsnNode superInit = m.name.equals("<init>") ? superCall(cn, m) : null;
        boolean initialized = superInit == null;
        for (AbstractInsnNode i : real) {
            if ((i.getOpcode() == Opcodes.PUTFIELD || i.getOpcode() == Opcodes.PUTSTATIC)
                    && isReference(((FieldInsnNode) i).desc)) {
                stores.put(i, initialized || i.getOpcode() == Opcodes.PUTSTATIC);
            }
            if (i == superInit) {
                initialized = true;
            }
        }
        IdentityHashMap<AbstractInsnNode, LabelNode> at = new IdentityHashMap<>();
        // javac's handler of a synchronized block (astore, aload, monitorexit,
        // then aload, athrow; ecj's: aload, monitorexit, athrow) covers its
        // own first instructions, the lock still held. C1 compiles no method
        // where such a handler's first block may throw to the handler itself
        // ("exception handler covers itself"), which monitorexit does not,
        // for C1, but the calls the rewrite adds would: the method would stay
        // interpreted. (Nor would an exception from them that leaves the
        // handler's range with the lock held do: C1 does not compile
        // unbalanced monitors.) Such a handler's hooks run where its range
        // ends, the lock released: the catch (the exception from the local
        // javac stored it in, or from the stack), its segment's counter, then
        // its monitorexit's.
        IdentityHashMap<AbstractInsnNode, AbstractInsnNode> deferredFrom = new IdentityHashMap<>();
        IdentityHashMap<AbstractInsnNode, AbstractInsnNode> deferredTo = new IdentityHashMap<>();
        IdentityHashMap<AbstractInsnNode, Boolean> deferredExit = new IdentityHashMap<>();
        for (TryCatchBlockNode t : m.tryCatchBlocks) {
            int from = real.indexOf(firstReal(t.start));
            AbstractInsnNode last = firstReal(t.end);
            int to = last == null ? real.size() : real.indexOf(last);
            int h = real.indexOf(firstReal(t.handler));
            if (from < 0 || h < from || h >= to || to >= real.size() || deferredFrom.containsKey(real.get(h))
                    || deferredTo.containsKey(real.get(to)) || leader.containsKey(real.get(to))) {
                continue;
            }
            // javac stores the exception first; ecj leaves it on the stack.
            boolean stored = real.get(h).getOpcode() == Opcodes.ASTORE;
            boolean plain = true;
            int balance = 0;
            for (int k = stored ? h + 1 : h; k < to; k++) {
                int o = real.get(k).getOpcode();
                plain &= (k == h || !leader.containsKey(real.get(k))) && (o == Opcodes.ALOAD || o == Opcodes.MONITOREXIT);
                balance += o == Opcodes.ALOAD ? 1 : -1;
            }
            if (plain && balance == 0) {
                deferredFrom.put(real.get(h), real.get(to));
                deferredTo.put(real.get(to), real.get(h));
                for (int k = h + 1; k < to; k++) {
                    if (real.get(k).getOpcode() == Opcodes.MONITOREXIT) {
                        deferredExit.put(real.get(k), true);
                    }
                }
            }
        }
        // Bridge calls run inline, replaced once the loop is done (see inlined).
        IdentityHashMap<AbstractInsnNode, InsnList> inline = new IdentityHashMap<>();
        for (AbstractInsnNode i : real) {
            int op = i.getOpcode();
            int ipc = pcOf.get(i);
            AbstractInsnNode caughtAt = deferredTo.get(i);
            if (caughtAt != null) {
                InsnList h = new InsnList();
                if (caughtAt.getOpcode() == Opcodes.ASTORE) {
                    h.add(new VarInsnNode(Opcodes.ALOAD, ((VarInsnNode) caughtAt).var));
                } else {
                    h.add(new InsnNode(Opcodes.DUP));
                }
                push(h, pcOf.get(caughtAt));
                h.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
                h.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "caught",
                        "(Ljava/lang/Throwable;I" + TS_DESC + ")V", false));
                h.add(counter(cVar, slotOf.get(caughtAt)));
                for (AbstractInsnNode k = caughtAt; k != i; k = k.getNext()) {
                    if (deferredExit.containsKey(k)) {
                        h.add(hook(tsVar, "monitorExit"));
                    }
                }
                insns.insertBefore(i, h);
            }
            if (leader.containsKey(i) && deferredFrom.containsKey(i)) {
                // Its hooks run where its range ends (above).
            } else if (leader.containsKey(i)) {
                if (handler.containsKey(i)) {
                    // The exception on the stack, and where its handler is.
                    InsnList h = new InsnList();
                    h.add(new InsnNode(Opcodes.DUP));
                    push(h, ipc);
                    h.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
                    h.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "caught",
                            "(Ljava/lang/Throwable;I" + TS_DESC + ")V", false));
                    insns.insertBefore(i, h);
                }
                insns.insertBefore(i, counter(cVar, slotOf.get(i)));
            }
            if (isInvoke(op) && i instanceof MethodInsnNode
                    && unseen(((MethodInsnNode) i).owner, ((MethodInsnNode) i).name, ((MethodInsnNode) i).desc)) {
                // Not a call the profile has (see unseen).
            } else if (op == Opcodes.INVOKESTATIC && inlined((MethodInsnNode) i) != null) {
                // A pure observed bridge method (a long shift, lcmp): Rt runs
                // its bytecode here and observes the operand in this frame,
                // which is what the profile makes of the call once spliced
                // (jopcal_profiler::tree::inline_bridge): no call, no context,
                // no event. Most of the calls a tree's software float makes.
                MethodInsnNode mi = (MethodInsnNode) i;
                int[] obs = inlined(mi);
                InsnList run = new InsnList();
                run.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
                push(run, obs[0] << 16 | (obs[2] & 0xff));
                int close = mi.desc.indexOf(')');
                String desc = mi.desc.substring(0, close) + TS_DESC + "I" + mi.desc.substring(close);
                run.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, mi.name, desc, false));
                inline.put(i, run);
            } else if (isInvoke(op)) {
                String so;
                String sn;
                String sd;
                if (i instanceof MethodInsnNode) {
                    MethodInsnNode mi = (MethodInsnNode) i;
                    so = mi.owner;
                    sn = mi.name;
                    sd = mi.desc;
                } else {
                    InvokeDynamicInsnNode d = (InvokeDynamicInsnNode) i;
                    so = "";
                    sn = d.name;
                    sd = d.desc;
                }
                int site = Rt.addSite(mid, ipc, op, so, sn, sd);
                InsnList pre = new InsnList();
                pre.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
                push(pre, site);
                pre.add(new FieldInsnNode(Opcodes.PUTFIELD, TS_TYPE, "pending", "I"));
                insns.insertBefore(i, pre);
                // (No branch here: a branch target would need a stack map frame.)
                insns.insert(i, hook(tsVar, "noEntry"));
            } else if (op == Opcodes.ATHROW) {
                // Where the exception arises in this frame (see Rt.arrivalPc).
                InsnList pre = new InsnList();
                pre.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
                push(pre, ipc);
                pre.add(new FieldInsnNode(Opcodes.PUTFIELD, TS_TYPE, "arrivalPc", "I"));
                insns.insertBefore(i, pre);
            } else if (tested.containsKey(i)) {
                // The path JOP's routine takes for the object tested (see Rt.typeCheck).
                InsnList pre = new InsnList();
                pre.add(new InsnNode(Opcodes.DUP));
                // The class named, as a constant: the test resolves it anyway.
                pre.add(new LdcInsnNode(Type.getObjectType(((TypeInsnNode) i).desc)));
                pre.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
                push(pre, op);
                pre.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "typeCheck",
                        "(Ljava/lang/Object;Ljava/lang/Class;" + TS_DESC + "I)V", false));
                insns.insertBefore(i, pre);
            } else if (op == Opcodes.NEW && classConstants) {
                // The object's size in JOP's heap (see Rt.allocObject).
                InsnList pre = new InsnList();
                pre.add(new LdcInsnNode(Type.getObjectType(((TypeInsnNode) i).desc)));
                pre.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
                pre.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "allocObject",
                        "(Ljava/lang/Class;" + TS_DESC + ")V", false));
                insns.insertBefore(i, pre);
            } else if (op == Opcodes.MULTIANEWARRAY) {
                // Its arrays' sizes, read from what it made (see Rt.allocMulti).
                InsnList post = new InsnList();
                post.add(new InsnNode(Opcodes.DUP));
                push(post, ((MultiANewArrayInsnNode) i).dims);
                post.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
                post.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "allocMulti",
                        "(Ljava/lang/Object;I" + TS_DESC + ")V", false));
                insns.insert(i, post);
            } else if (op == Opcodes.NEWARRAY || op == Opcodes.ANEWARRAY) {
                // The array's size in JOP's heap: its length, a word an element (two for long, double).
                boolean wide = op == Opcodes.NEWARRAY
                        && (((IntInsnNode) i).operand == Opcodes.T_LONG || ((IntInsnNode) i).operand == Opcodes.T_DOUBLE);
                InsnList pre = new InsnList();
                pre.add(new InsnNode(Opcodes.DUP));
                push(pre, wide ? 2 : 1);
                pre.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
                pre.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "allocArray", "(II" + TS_DESC + ")V", false));
                insns.insertBefore(i, pre);
            } else if (stores.containsKey(i)) {
                FieldInsnNode f = (FieldInsnNode) i;
                InsnList pre = new InsnList();
                if (op == Opcodes.PUTSTATIC) {
                    pre.add(new FieldInsnNode(Opcodes.GETSTATIC, f.owner, f.name, f.desc));
                } else if (stores.get(i)) {
                    pre.add(new InsnNode(Opcodes.DUP2));
                    pre.add(new InsnNode(Opcodes.POP));
                    pre.add(new FieldInsnNode(Opcodes.GETFIELD, f.owner, f.name, f.desc));
                } else {
                    pre.add(new InsnNode(Opcodes.ACONST_NULL));
                }
                pre.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
                push(pre, op);
                pre.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "oldRef",
                        "(Ljava/lang/Object;" + TS_DESC + "I)V", false));
                insns.insertBefore(i, pre);
            } else if (op == Opcodes.MONITORENTER) {
                insns.insertBefore(i, hook(tsVar, "monitorEnter"));
            } else if (op == Opcodes.MONITOREXIT && !deferredExit.containsKey(i)) {
                insns.insertBefore(i, hook(tsVar, "monitorExit"));
            } else if (isReturn(op)) {
                insns.insertBefore(i, hook(tsVar, "exit"));
            }
            // Where the original instruction now starts (for the pc of an implicit exception).
            LabelNode here = new LabelNode();
            insns.insertBefore(i, here);
            at.put(i, here);
        }
        for (Map.Entry<AbstractInsnNode, InsnList> e : inline.entrySet()) {
            insns.insertBefore(e.getKey(), e.getValue());
            insns.remove(e.getKey());
        }
        // The arms' trampolines: count the arm, then go where the switch went.
        InsnList tramps = new InsnList();
        for (Object[] arm : arms) {
            LookupSwitchInsnNode s = (LookupSwitchInsnNode) arm[0];
            LabelNode target = (LabelNode) arm[1];
            int slot = (Integer) arm[2];
            LabelNode t = new LabelNode();
            tramps.add(t);
            if (frames) {
                FrameNode there = frameAfter(target);
                if (there == null) {
                    throw new IllegalStateException(m.name + ": a lookupswitch target without a frame");
                }
                tramps.add(new FrameNode(Opcodes.F_NEW, there.local.size(), there.local.toArray(),
                        there.stack.size(), there.stack.toArray()));
            }
            tramps.add(counter(cVar, slot));
            tramps.add(new JumpInsnNode(Opcodes.GOTO, target));
            int only = (Integer) arm[3];
            if (only == DEFAULT_ARM) {
                s.dflt = t;
            } else if (only >= 0) {
                s.labels.set(only, t);
            } else {
                for (int j = 0; j < s.labels.size(); j++) {
                    if (s.labels.get(j) == target) {
                        s.labels.set(j, t);
                    }
                }
                if (s.dflt == target) {
                    s.dflt = t;
                }
            }
        }
        // Entry, and the handler for everything that unwinds the frame.
        InsnList entry = new InsnList();
        push(entry, mid);
        entry.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "enter", "(I)" + TS_DESC, false));
        entry.add(new InsnNode(Opcodes.DUP));
        entry.add(new VarInsnNode(Opcodes.ASTORE, tsVar));
        entry.add(new FieldInsnNode(Opcodes.GETFIELD, TS_TYPE, "c", "[J"));
        entry.add(new VarInsnNode(Opcodes.ASTORE, cVar));
        int[] obs = observed.get(owner.equals(bridge) ? m.name : "\0");
        if (obs != null) {
            entry.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
            if (obs[1] >= 0) {
                entry.add(new VarInsnNode(Opcodes.ILOAD, obs[1]));
                push(entry, obs[0] << 16 | obs[2]);
                entry.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "observeCount", "(" + TS_DESC + "II)V", false));
            } else if (obs[1] == -2) {
                entry.add(new VarInsnNode(Opcodes.ALOAD, 0));
                entry.add(new VarInsnNode(Opcodes.ILOAD, 1));
                push(entry, obs[0]);
                entry.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "observeElement", "(" + TS_DESC + "[Ljava/lang/Object;II)V", false));
            } else {
                entry.add(new VarInsnNode(Opcodes.LLOAD, 0));
                entry.add(new VarInsnNode(Opcodes.LLOAD, 2));
                push(entry, obs[0]);
                entry.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "observeCompare", "(" + TS_DESC + "JJI)V", false));
            }
        }
        LabelNode begin = new LabelNode();
        AbstractInsnNode init = m.name.equals("<init>") ? superCall(cn, m) : null;
        if (init != null) {
            // A handler may not cover a constructor's code before this is
            // initialized: the frame is left by exception from there on.
            insns.insert(init, begin);
        } else {
            entry.add(begin);
        }
        insns.insert(entry);
        LabelNode end = new LabelNode();
        LabelNode unwind = new LabelNode();
        insns.add(end);
        insns.add(tramps);
        insns.add(unwind);
        if (frames) {
            Object[] locals = withOurs(new ArrayList<>(), m.maxLocals).toArray();
            insns.add(new FrameNode(Opcodes.F_NEW, locals.length, locals, 1, new Object[] {"java/lang/Throwable"}));
        }
        insns.add(new InsnNode(Opcodes.DUP));
        insns.add(new VarInsnNode(Opcodes.ALOAD, tsVar));
        insns.add(new MethodInsnNode(Opcodes.INVOKESTATIC, RT, "unwind", "(Ljava/lang/Throwable;" + TS_DESC + ")V", false));
        insns.add(new InsnNode(Opcodes.ATHROW));
        m.tryCatchBlocks.add(new TryCatchBlockNode(begin, end, unwind, null));
        // Debug tables would name slots the rewrite reuses: dropped.
        m.localVariables = null;
        m.visibleLocalVariableAnnotations = null;
        m.invisibleLocalVariableAnnotations = null;
        m.maxLocals += 2;
        return () -> {
            int[] map = new int[end.getLabel().getOffset() + 1];
            java.util.Arrays.fill(map, -1);
            for (Map.Entry<AbstractInsnNode, LabelNode> e : at.entrySet()) {
                int off = e.getValue().getLabel().getOffset();
                if (off < map.length) {
                    map[off] = pcOf.get(e.getKey());
                }
            }
            Rt.setPcMap(mid, map);
        };
    }

    /** A frame's locals with the rewrite's two after the method's own {@code maxLocals} slots. */
    static List<Object> withOurs(List<Object> locals, int maxLocals) {
        List<Object> out = new ArrayList<>(locals == null ? List.of() : locals);
        int slots = 0;
        for (Object t : out) {
            slots += (t == Opcodes.LONG || t == Opcodes.DOUBLE) ? 2 : 1;
        }
        while (slots < maxLocals) {
            out.add(Opcodes.TOP);
            slots++;
        }
        out.add(TS_TYPE);
        out.add("[J");
        return out;
    }

    /** The frame at a label (the frame node that follows it before any instruction). */
    static FrameNode frameAfter(LabelNode l) {
        for (AbstractInsnNode n = l.getNext(); n != null && n.getOpcode() < 0; n = n.getNext()) {
            if (n instanceof FrameNode) {
                return (FrameNode) n;
            }
        }
        return null;
    }

    /** A constructor's call of its superclass's (or another of its own) constructor on this. */
    static AbstractInsnNode superCall(ClassNode cn, MethodNode m) {
        for (AbstractInsnNode i = m.instructions.getFirst(); i != null; i = i.getNext()) {
            if (i.getOpcode() == Opcodes.INVOKESPECIAL) {
                MethodInsnNode mi = (MethodInsnNode) i;
                if (mi.name.equals("<init>") && (mi.owner.equals(cn.superName) || mi.owner.equals(cn.name))) {
                    return i;
                }
            }
        }
        return null;
    }

    static AbstractInsnNode firstReal(AbstractInsnNode n) {
        while (n != null && n.getOpcode() < 0) {
            n = n.getNext();
        }
        return n;
    }

    static int[] toArray(List<Integer> l) {
        int[] a = new int[l.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = l.get(i);
        }
        return a;
    }
}
