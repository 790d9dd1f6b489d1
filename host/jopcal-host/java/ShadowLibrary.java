package jopcal.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.commons.ClassRemapper;
import org.objectweb.asm.commons.Remapper;

/**
 * jopcal's shadow of a JOP tree's class library (jopcal's own code, run by
 * jopcal_pipeline::host_shadow). JOP runs its own String, StringBuffer,
 * Integer, Vector, Hashtable, ...; the host JVM cannot run them in place of
 * its own (the JVM itself and the JDK's code depend on theirs). So the
 * program, compiled against the tree's library as the tree's build compiles
 * it, runs on the host with the tree's classes under names of their own: a
 * tree class java/lang/String becomes java/lang/jopcal$tree$String (in its
 * own package, so that package access holds), and every reference to it in
 * the program and in the library follows. The JDK keeps what the JVM needs
 * as its own (Object, Class, Throwable and every exception, threads,
 * System, and Math and Random, which jopcal's host library handles; the
 * program's System.out is the tree's, the field of a shadow of the tree's
 * System class, jopcal$tree$System): where
 * the program hands one of those a String, or gets one back, a conversion
 * of jopcal's (class jopcal$tree$Strings, which the profile drops) turns
 * one into the other; a string literal becomes the tree's String once.
 * toString (and an exception's getMessage) gets a bridge with the JDK's
 * signature, so that the JDK's virtual calls reach the tree's methods.
 * Inside the JDK's Throwable and exception classes the tree's code runs
 * where it differs and can (mergeThrowable, mergeConstructors).
 *
 * Usage: ShadowLibrary COMPILED PROGRAM_OUT LIBRARY_OUT
 *   COMPILED: the program and the tree's library as the tree's compiler
 *   built them; PROGRAM_OUT gets the program's classes, LIBRARY_OUT the
 *   shadow classes (for java.base), shadowed.txt (their tree names, one
 *   a line) and tree-methods.txt (the tree's methods that run inside the
 *   JDK's classes, as jopcal_profile names them); PROGRAM_OUT/init.txt
 *   lists the classes JOP initializes before main. On a reference the shadow cannot carry, it exits 1 with one line
 *   on standard error naming the class, the method and the reference.
 */
public final class ShadowLibrary {
    /** The prefix of a shadow class's simple name (jopcal_profile drops it). */
    static final String PREFIX = "jopcal$tree$";
    /** jopcal's conversions between the JDK's strings and the tree's. */
    static final String STRINGS = "java/lang/" + PREFIX + "Strings";
    static final String STRING = "java/lang/String";
    /** The JDK's System stays; its streams are the tree's, in a shadow System of their own. */
    static final String SYSTEM = "java/lang/System";
    static final String SHADOW_SYSTEM = "java/lang/" + PREFIX + "System";
    static final Set<String> STREAMS = Set.of("out", "err", "in");
    /** A type the remapper leaves as the JDK's: HOST + its name. */
    static final String HOST = "jopcal/host$/";

    /** The tree classes the JDK's own stand for on the host. */
    static final Set<String> KEEP = new HashSet<>(List.of(
            "java/lang/Object", "java/lang/Class", "java/lang/System", "java/lang/Math",
            "java/lang/Thread", "java/lang/Runnable", "java/lang/Runtime", "java/lang/Override",
            "java/lang/ThreadGroup", "java/util/Random"));
    /** Methods of the JDK's classes a program's class overrides with a String result. */
    static final Set<String> BRIDGED = Set.of("toString", "getMessage", "getLocalizedMessage");

    final Map<String, ClassReader> classes = new HashMap<>();
    final Map<String, Boolean> kept = new HashMap<>();

    private ShadowLibrary() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            System.err.println("usage: ShadowLibrary COMPILED PROGRAM_OUT LIBRARY_OUT");
            System.exit(2);
        }
        ShadowLibrary s = new ShadowLibrary();
        Path compiled = Paths.get(args[0]);
        try (Stream<Path> files = Files.walk(compiled)) {
            for (Path p : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                ClassReader r = new ClassReader(Files.readAllBytes(p));
                s.classes.put(r.getClassName(), r);
            }
        }
        try {
            s.write(Paths.get(args[1]), Paths.get(args[2]));
        } catch (Unshadowable e) {
            System.err.println(e.getMessage());
            System.exit(1);
        }
    }

    /** A reference the shadow cannot carry across to the JDK. */
    static final class Unshadowable extends RuntimeException {
        Unshadowable(String message) {
            super(message);
        }
    }

    static boolean isLibrary(String name) {
        return name.startsWith("java/");
    }

    static boolean isRuntime(String name) {
        return name.startsWith("com/jopdesign/sys/");
    }

    /** Whether the host runs the JDK's class for the tree's `name`. */
    boolean keep(String name) {
        if (!isLibrary(name)) {
            return false;
        }
        Boolean k = kept.get(name);
        if (k == null) {
            String outer = name.contains("$") ? name.substring(0, name.indexOf('$')) : name;
            k = KEEP.contains(outer) || name.startsWith("java/lang/annotation/")
                    || name.startsWith("java/lang/reflect/") || isThrowable(name) || !classes.containsKey(name);
            kept.put(name, k);
        }
        return k;
    }

    boolean isThrowable(String name) {
        for (String n = name; n != null; ) {
            if (n.equals("java/lang/Throwable")) {
                return true;
            }
            ClassReader r = classes.get(n);
            n = r == null ? null : r.getSuperName();
        }
        return false;
    }

    /** Whether `name` is a tree class the host runs under its shadow name. */
    boolean shadowed(String name) {
        return isLibrary(name) && !keep(name);
    }

    static String shadowName(String name) {
        int slash = name.lastIndexOf('/');
        return name.substring(0, slash + 1) + PREFIX + name.substring(slash + 1);
    }

    /** Whether `t` (a field or argument type) names a shadowed class. */
    boolean shadowedType(Type t) {
        if (t.getSort() == Type.ARRAY) {
            t = t.getElementType();
        }
        return t.getSort() == Type.OBJECT && shadowed(t.getInternalName());
    }

    /** `desc` with every shadowed type written as the JDK's own. */
    String hostDesc(String desc) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < desc.length()) {
            char c = desc.charAt(i);
            if (c == 'L') {
                int end = desc.indexOf(';', i);
                String name = desc.substring(i + 1, end);
                out.append('L').append(shadowed(name) ? HOST + name : name).append(';');
                i = end + 1;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    /** The class that declares `name desc` for a reference through `owner`, or null. */
    String declaring(String owner, String name, String desc) {
        Deque<String> todo = new ArrayDeque<>();
        Set<String> seen = new HashSet<>();
        todo.add(owner);
        while (!todo.isEmpty()) {
            String c = todo.poll();
            if (!seen.add(c)) {
                continue;
            }
            ClassReader r = classes.get(c);
            if (r == null) {
                continue;
            }
            boolean[] found = {false};
            r.accept(new ClassVisitor(Opcodes.ASM9) {
                @Override
                public MethodVisitor visitMethod(int access, String n, String d, String sig, String[] ex) {
                    if (n.equals(name) && d.equals(desc)) {
                        found[0] = true;
                    }
                    return null;
                }
            }, ClassReader.SKIP_CODE);
            if (found[0]) {
                return c;
            }
            if (r.getSuperName() != null) {
                todo.add(r.getSuperName());
            }
            Collections.addAll(todo, r.getInterfaces());
        }
        return null;
    }

    final Remapper remapper = new Remapper() {
        @Override
        public String map(String name) {
            if (name.startsWith(HOST)) {
                return name.substring(HOST.length());
            }
            return shadowed(name) ? shadowName(name) : name;
        }
    };

    void write(Path programOut, Path libraryOut) throws IOException {
        List<String> names = new ArrayList<>(classes.keySet());
        Collections.sort(names);
        List<String> shadow = new ArrayList<>();
        List<String> init = new ArrayList<>();
        for (String name : names) {
            if (isRuntime(name) || keep(name)) {
                continue;
            }
            boolean library = shadowed(name);
            ClassWriter w = new ClassWriter(ClassWriter.COMPUTE_MAXS);
            classes.get(name).accept(new Converting(new ClassRemapper(w, remapper)), 0);
            String out = library ? shadowName(name) : name;
            Path file = (library ? libraryOut : programOut).resolve(out + ".class");
            Files.createDirectories(file.getParent());
            Files.write(file, w.toByteArray());
            if (library) {
                shadow.add(name.replace('/', '.'));
            }
            init.add(out.replace('/', '.'));
        }
        if (classes.containsKey(SYSTEM)) {
            // The tree's System as a class of its own: its streams (and
            // its static initializer, which makes them); the program's
            // other uses of System stay the JDK's.
            Remapper self = new Remapper() {
                @Override
                public String map(String name) {
                    return name.equals(SYSTEM) ? SHADOW_SYSTEM : remapper.map(name);
                }
            };
            ClassWriter w = new ClassWriter(ClassWriter.COMPUTE_MAXS);
            classes.get(SYSTEM).accept(new Converting(new ClassRemapper(w, self)), 0);
            Path file = libraryOut.resolve(SHADOW_SYSTEM + ".class");
            Files.createDirectories(file.getParent());
            Files.write(file, w.toByteArray());
            init.add(SHADOW_SYSTEM.replace('/', '.'));
        }
        List<String> merged = new ArrayList<>();
        List<String> mergedClasses = mergeConstructors(libraryOut, merged);
        if (mergeThrowable(libraryOut, merged)) {
            mergedClasses.add(0, "java.lang.Throwable");
        }
        Path strings = libraryOut.resolve(STRINGS + ".class");
        Files.createDirectories(strings.getParent());
        Files.write(strings, strings());
        Files.createDirectories(programOut);
        Files.write(libraryOut.resolve("shadowed.txt"), lines(shadow));
        Files.write(libraryOut.resolve("tree-methods.txt"), lines(merged));
        Files.write(programOut.resolve("init.txt"), lines(init));
        PrintStream o = System.out;
        o.println("shadowed " + shadow.size() + " classes of the tree's library");
        if (!mergedClasses.isEmpty()) {
            o.println("the tree's methods of " + String.join(", ", mergedClasses) + " run in the JDK's classes");
        }
    }

    /**
     * The JDK keeps its exception classes (the JVM throws and catches its
     * own), but a constructor of the tree's that builds its message from a
     * number (ArrayIndexOutOfBoundsException(int): "Array index out of
     * range: " + index, in the tree's StringBuilder and Integer) does work on
     * JOP that the JDK's does differently. Each such constructor (its
     * parameters all primitive, the JDK's class having one of the same
     * descriptor) replaces the JDK's in a copy of the JDK's class for
     * java.base, converted as the program's code is: the profile counts the
     * tree's bytecodes. The JDK's other members stay. Returns the classes
     * written, dotted; adds each constructor taken to `methods`, as
     * jopcal_profile names a method (java.lang.X.<init>(I)V).
     */
    List<String> mergeConstructors(Path libraryOut, List<String> methods) throws IOException {
        List<String> done = new ArrayList<>();
        List<String> names = new ArrayList<>(classes.keySet());
        Collections.sort(names);
        for (String name : names) {
            if (!isLibrary(name) || !keep(name) || !isThrowable(name) || name.equals("java/lang/Throwable")) {
                continue;
            }
            byte[] jdkBytes;
            try (java.io.InputStream in = Object.class.getResourceAsStream("/" + name + ".class")) {
                if (in == null) {
                    continue;
                }
                jdkBytes = in.readAllBytes();
            }
            Set<String> jdkConstructors = new HashSet<>();
            new ClassReader(jdkBytes).accept(new ClassVisitor(Opcodes.ASM9) {
                @Override
                public MethodVisitor visitMethod(int access, String n, String d, String sig, String[] ex) {
                    if (n.equals("<init>")) {
                        jdkConstructors.add(d);
                    }
                    return null;
                }
            }, ClassReader.SKIP_CODE);
            Set<String> replaced = new HashSet<>();
            classes.get(name).accept(new ClassVisitor(Opcodes.ASM9) {
                @Override
                public MethodVisitor visitMethod(int access, String n, String d, String sig, String[] ex) {
                    Type[] args = Type.getArgumentTypes(d);
                    boolean primitive = args.length > 0;
                    for (Type t : args) {
                        primitive &= t.getSort() != Type.OBJECT && t.getSort() != Type.ARRAY;
                    }
                    if (n.equals("<init>") && primitive && jdkConstructors.contains(d)) {
                        replaced.add(d);
                    }
                    return null;
                }
            }, ClassReader.SKIP_CODE);
            if (replaced.isEmpty()) {
                continue;
            }
            ClassWriter w = new ClassWriter(ClassWriter.COMPUTE_MAXS);
            // Only the constructors taken, as the program's code is converted.
            ClassVisitor taken = new ClassVisitor(Opcodes.ASM9) {
                @Override
                public MethodVisitor visitMethod(int access, String n, String d, String sig, String[] ex) {
                    return n.equals("<init>") && replaced.contains(d) ? w.visitMethod(access, n, d, sig, ex) : null;
                }
            };
            new ClassReader(jdkBytes).accept(new ClassVisitor(Opcodes.ASM9, w) {
                @Override
                public MethodVisitor visitMethod(int access, String n, String d, String sig, String[] ex) {
                    if (n.equals("<init>") && replaced.contains(d)) {
                        return null;
                    }
                    return super.visitMethod(access, n, d, sig, ex);
                }

                @Override
                public void visitEnd() {
                    classes.get(name).accept(new Converting(new ClassRemapper(taken, remapper)), 0);
                    super.visitEnd();
                }
            }, 0);
            Path file = libraryOut.resolve(name + ".class");
            Files.createDirectories(file.getParent());
            Files.write(file, w.toByteArray());
            done.add(name.replace('/', '.'));
            List<String> descs = new ArrayList<>(replaced);
            Collections.sort(descs);
            for (String d : descs) {
                methods.add(name.replace('/', '.') + ".<init>" + d);
            }
        }
        return done;
    }

    /** The name of the host's stack-trace filling, which the profile drops (jopcal_profile::routed). */
    static final String HOST_FILL = "fillInStackTrace";
    static final String HOST_FILL_DESC = "(Ljava/lang/Throwable;)Ljava/lang/Throwable;";
    static final String THROWABLE = "java/lang/Throwable";

    /**
     * The JDK keeps its Throwable (the JVM fills its fields), but the
     * tree's constructors of it, and the tree's fillInStackTrace, do on JOP
     * what the JDK's do otherwise: the JDK's fillInStackTrace is
     * synchronized and walks the stack, the tree's returns this. Where the
     * tree's versions only move references between the fields the JDK's
     * Throwable has (a message handed in is the JDK's String, never
     * looked into), they replace the JDK's in a copy of it for java.base,
     * so that the profile counts the tree's bytecodes. The host still
     * fills the stack trace (a failing run's report needs it): the tree's
     * fillInStackTrace calls, just before it returns this, a static
     * fillInStackTrace(Throwable) of the copy's own that calls the JDK's
     * native one, and the profile drops that call with all it ran, as it
     * drops the string conversions. The name keeps the JVM's trace free of
     * jopcal's frames: it leaves out the frames of methods so named, as it
     * leaves out the constructors. Adds the methods taken to `methods`;
     * false (and the JDK's Throwable whole) where the tree's cannot move.
     */
    boolean mergeThrowable(Path libraryOut, List<String> methods) throws IOException {
        ClassReader tree = classes.get(THROWABLE);
        if (tree == null) {
            return false;
        }
        byte[] jdkBytes;
        try (java.io.InputStream in = Object.class.getResourceAsStream("/" + THROWABLE + ".class")) {
            jdkBytes = in.readAllBytes();
        }
        Set<String> jdkMethods = new HashSet<>();
        Set<String> jdkFields = new HashSet<>();
        new ClassReader(jdkBytes).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public org.objectweb.asm.FieldVisitor visitField(int access, String n, String d, String sig, Object v) {
                jdkFields.add(n + " " + d);
                return null;
            }

            @Override
            public MethodVisitor visitMethod(int access, String n, String d, String sig, String[] ex) {
                jdkMethods.add(n + d);
                return null;
            }
        }, ClassReader.SKIP_CODE);
        String fill = "fillInStackTrace()L" + THROWABLE + ";";
        if (jdkMethods.contains(HOST_FILL + HOST_FILL_DESC)) {
            return false;
        }
        // The constructors the JDK has too, and fillInStackTrace, each only
        // where its code stays within what the JDK's Throwable offers.
        Set<String> taken = new HashSet<>();
        boolean[] returnsThis = {false};
        tree.accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String n, String d, String sig, String[] ex) {
                String m = n + d;
                if (!jdkMethods.contains(m) || !(n.equals("<init>") || m.equals(fill))) {
                    return null;
                }
                return new Movable(m, jdkMethods, jdkFields, taken, returnsThis);
            }
        }, 0);
        if (!taken.contains(fill) || !returnsThis[0]) {
            return false;
        }
        ClassWriter w = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        ClassVisitor treeMethods = new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String n, String d, String sig, String[] ex) {
                if (!taken.contains(n + d)) {
                    return null;
                }
                MethodVisitor mv = w.visitMethod(access, n, d, sig, ex);
                if (!(n + d).equals(fill)) {
                    return mv;
                }
                return new MethodVisitor(Opcodes.ASM9, mv) {
                    @Override
                    public void visitInsn(int op) {
                        if (op == Opcodes.ARETURN) {
                            super.visitMethodInsn(Opcodes.INVOKESTATIC, THROWABLE, HOST_FILL, HOST_FILL_DESC, false);
                        }
                        super.visitInsn(op);
                    }
                };
            }
        };
        new ClassReader(jdkBytes).accept(new ClassVisitor(Opcodes.ASM9, w) {
            @Override
            public MethodVisitor visitMethod(int access, String n, String d, String sig, String[] ex) {
                return taken.contains(n + d) ? null : super.visitMethod(access, n, d, sig, ex);
            }

            @Override
            public void visitEnd() {
                tree.accept(treeMethods, 0);
                MethodVisitor mv = w.visitMethod(Opcodes.ACC_PRIVATE | Opcodes.ACC_STATIC | Opcodes.ACC_SYNTHETIC,
                        HOST_FILL, HOST_FILL_DESC, null, null);
                mv.visitCode();
                mv.visitVarInsn(Opcodes.ALOAD, 0);
                mv.visitFieldInsn(Opcodes.GETSTATIC, THROWABLE, "UNASSIGNED_STACK", "[Ljava/lang/StackTraceElement;");
                mv.visitFieldInsn(Opcodes.PUTFIELD, THROWABLE, "stackTrace", "[Ljava/lang/StackTraceElement;");
                mv.visitVarInsn(Opcodes.ALOAD, 0);
                mv.visitInsn(Opcodes.ICONST_0);
                mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, THROWABLE, "fillInStackTrace", "(I)L" + THROWABLE + ";", false);
                mv.visitInsn(Opcodes.ARETURN);
                mv.visitMaxs(0, 0);
                mv.visitEnd();
                super.visitEnd();
            }
        }, 0);
        Path file = libraryOut.resolve(THROWABLE + ".class");
        Files.createDirectories(file.getParent());
        Files.write(file, w.toByteArray());
        List<String> sorted = new ArrayList<>(taken);
        Collections.sort(sorted);
        for (String m : sorted) {
            int paren = m.indexOf('(');
            methods.add("java.lang.Throwable." + m.substring(0, paren) + m.substring(paren));
        }
        return true;
    }

    /**
     * Adds `method` to `taken` at its end if its code refers to nothing but
     * the classes the host keeps as the JDK's, the fields and methods the
     * JDK's Throwable has, and the JDK's String only as a reference moved
     * about (no literal, no call of String's); notes whether it returns this.
     */
    final class Movable extends MethodVisitor {
        final String method;
        final Set<String> jdkMethods;
        final Set<String> jdkFields;
        final Set<String> taken;
        final boolean[] returnsThis;
        boolean movable = true;
        boolean thisOnTop;
        boolean onlyThis = true;

        Movable(String method, Set<String> jdkMethods, Set<String> jdkFields, Set<String> taken, boolean[] returnsThis) {
            super(Opcodes.ASM9);
            this.method = method;
            this.jdkMethods = jdkMethods;
            this.jdkFields = jdkFields;
            this.taken = taken;
            this.returnsThis = returnsThis;
        }

        boolean kept(String type) {
            Type t = Type.getObjectType(type);
            if (t.getSort() == Type.ARRAY) {
                t = t.getElementType();
            }
            return t.getSort() != Type.OBJECT || t.getInternalName().equals(STRING) || keep(t.getInternalName());
        }

        /** Whether every parameter and the result of `desc` is a type the host keeps. */
        boolean keptDesc(String desc) {
            boolean all = keptType(Type.getReturnType(desc));
            for (Type t : Type.getArgumentTypes(desc)) {
                all &= keptType(t);
            }
            return all;
        }

        boolean keptType(Type t) {
            return t.getSort() != Type.OBJECT && t.getSort() != Type.ARRAY || kept(t.getInternalName());
        }

        @Override
        public void visitVarInsn(int op, int var) {
            thisOnTop = op == Opcodes.ALOAD && var == 0;
        }

        @Override
        public void visitInsn(int op) {
            if (op == Opcodes.ARETURN) {
                onlyThis &= thisOnTop;
            }
            thisOnTop = false;
        }

        @Override
        public void visitLdcInsn(Object value) {
            movable &= !(value instanceof String) && !(value instanceof Type);
            thisOnTop = false;
        }

        @Override
        public void visitIntInsn(int op, int operand) {
            thisOnTop = false;
        }

        @Override
        public void visitJumpInsn(int op, Label label) {
            thisOnTop = false;
        }

        @Override
        public void visitIincInsn(int var, int increment) {
            thisOnTop = false;
        }

        @Override
        public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
            thisOnTop = false;
        }

        @Override
        public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
            thisOnTop = false;
        }

        @Override
        public void visitMultiANewArrayInsn(String desc, int dims) {
            movable = false;
        }

        @Override
        public void visitTypeInsn(int op, String type) {
            movable &= kept(type) && !type.equals(STRING);
            thisOnTop = false;
        }

        @Override
        public void visitFieldInsn(int op, String owner, String n, String desc) {
            movable &= owner.equals(THROWABLE) && jdkFields.contains(n + " " + desc);
            thisOnTop = false;
        }

        @Override
        public void visitMethodInsn(int op, String owner, String n, String desc, boolean itf) {
            movable &= !owner.equals(STRING) && kept(owner) && keptDesc(desc)
                    && (!owner.equals(THROWABLE) || jdkMethods.contains(n + desc));
            thisOnTop = false;
        }

        @Override
        public void visitInvokeDynamicInsn(String n, String desc, org.objectweb.asm.Handle h, Object... args) {
            movable = false;
        }

        @Override
        public void visitEnd() {
            movable &= keptDesc(method.substring(method.indexOf('(')));
            if (movable) {
                taken.add(method);
                if (method.startsWith("fillInStackTrace")) {
                    returnsThis[0] = onlyThis;
                }
            }
        }
    }

    static byte[] lines(List<String> l) {
        StringBuilder b = new StringBuilder();
        for (String s : l) {
            b.append(s).append('\n');
        }
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Before the remapper (it sees the tree's names): string literals become
     * the tree's strings; a call of a JDK class's method that takes or gives
     * a String converts it; toString gets its bridge.
     */
    final class Converting extends ClassVisitor {
        String name;
        boolean isInterface;
        final List<String> bridges = new ArrayList<>();

        Converting(ClassVisitor cv) {
            super(Opcodes.ASM9, cv);
        }

        @Override
        public void visit(int version, int access, String n, String sig, String sup, String[] ifs) {
            name = n;
            isInterface = (access & Opcodes.ACC_INTERFACE) != 0;
            super.visit(version, access, n, sig, sup, ifs);
        }

        @Override
        public org.objectweb.asm.FieldVisitor visitField(int access, String n, String desc, String sig, Object value) {
            // A constant String field's value is the JDK's string, which a
            // field of the tree's String cannot hold; the compiler put the
            // constant itself wherever the program reads it.
            boolean text = value instanceof String && desc.equals("L" + STRING + ";") && shadowed(STRING);
            return super.visitField(access, n, desc, sig, text ? null : value);
        }

        @Override
        public MethodVisitor visitMethod(int access, String n, String desc, String sig, String[] ex) {
            if (!isInterface && (access & Opcodes.ACC_STATIC) == 0 && BRIDGED.contains(n)
                    && desc.equals("()L" + STRING + ";")
                    && (n.equals("toString") || isThrowable(name))) {
                bridges.add(n);
            }
            MethodVisitor mv = super.visitMethod(access, n, desc, sig, ex);
            return mv == null ? null : new ConvertingMethod(mv, name, n + desc);
        }

        @Override
        public void visitEnd() {
            for (String b : bridges) {
                MethodVisitor mv = cv.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_SYNTHETIC | Opcodes.ACC_BRIDGE,
                        b, "()L" + HOST + STRING + ";", null, null);
                mv.visitCode();
                mv.visitVarInsn(Opcodes.ALOAD, 0);
                mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, name, b, "()L" + STRING + ";", false);
                mv.visitMethodInsn(Opcodes.INVOKESTATIC, HOST + STRINGS, "toHost",
                        "(L" + STRING + ";)L" + HOST + STRING + ";", false);
                mv.visitInsn(Opcodes.ARETURN);
                mv.visitMaxs(0, 0);
                mv.visitEnd();
            }
            super.visitEnd();
        }
    }

    final class ConvertingMethod extends MethodVisitor {
        final String owner;
        final String method;

        ConvertingMethod(MethodVisitor mv, String owner, String method) {
            super(Opcodes.ASM9, mv);
            this.owner = owner;
            this.method = method;
        }

        @Override
        public void visitLdcInsn(Object value) {
            super.visitLdcInsn(value);
            if (value instanceof String && shadowed(STRING)) {
                super.visitMethodInsn(Opcodes.INVOKESTATIC, HOST + STRINGS, "literal",
                        "(L" + HOST + STRING + ";)L" + STRING + ";", false);
            }
        }

        @Override
        public void visitFieldInsn(int op, String fowner, String n, String desc) {
            if (fowner.equals(SYSTEM) && STREAMS.contains(n) && classes.containsKey(SYSTEM)) {
                // The tree's System.out, a PrintStream of the tree's.
                super.visitFieldInsn(op, HOST + SHADOW_SYSTEM, n, desc);
                return;
            }
            if (keep(fowner) && !fowner.startsWith("[") && shadowedType(Type.getType(desc))) {
                throw unshadowable(fowner + "." + n + " " + desc);
            }
            super.visitFieldInsn(op, fowner, n, desc);
        }

        @Override
        public void visitMethodInsn(int op, String mowner, String n, String desc, boolean itf) {
            if (mowner.startsWith("[") || !shadowed(STRING)) {
                super.visitMethodInsn(op, mowner, n, desc, itf);
                return;
            }
            String decl = keep(mowner) ? mowner : declaring(mowner, n, desc);
            if (decl == null || !keep(decl)) {
                super.visitMethodInsn(op, mowner, n, desc, itf);
                return;
            }
            Type[] args = Type.getArgumentTypes(desc);
            for (int i = 0; i < args.length; i++) {
                if (!shadowedType(args[i])) {
                    continue;
                }
                if (i != args.length - 1 || !args[i].getDescriptor().equals("L" + STRING + ";")) {
                    throw unshadowable(mowner + "." + n + desc);
                }
                super.visitMethodInsn(Opcodes.INVOKESTATIC, HOST + STRINGS, "toHost",
                        "(L" + STRING + ";)L" + HOST + STRING + ";", false);
            }
            Type result = Type.getReturnType(desc);
            boolean convert = shadowedType(result);
            if (convert && !result.getDescriptor().equals("L" + STRING + ";")) {
                throw unshadowable(mowner + "." + n + desc);
            }
            super.visitMethodInsn(op, mowner, n, hostDesc(desc), itf);
            if (convert) {
                super.visitMethodInsn(Opcodes.INVOKESTATIC, HOST + STRINGS, "fromHost",
                        "(L" + HOST + STRING + ";)L" + STRING + ";", false);
            }
        }

        Unshadowable unshadowable(String what) {
            return new Unshadowable("ShadowLibrary: " + owner.replace('/', '.') + "." + method
                    + " uses the JDK's " + what.replace('/', '.')
                    + " with a class of the tree's library the host cannot convert");
        }
    }

    /** jopcal's conversions (final names: written past the remapper). */
    static byte[] strings() {
        String tree = "java/lang/" + PREFIX + "String";
        String treeDesc = "L" + tree + ";";
        String host = "Ljava/lang/String;";
        ClassWriter w = new ClassWriter(ClassWriter.COMPUTE_MAXS);
        w.visit(Opcodes.V1_5, Opcodes.ACC_PUBLIC | Opcodes.ACC_FINAL | Opcodes.ACC_SUPER, STRINGS, null,
                "java/lang/Object", null);
        w.visitField(Opcodes.ACC_PRIVATE | Opcodes.ACC_STATIC | Opcodes.ACC_FINAL, "LITERALS", "Ljava/util/HashMap;",
                null, null).visitEnd();
        MethodVisitor mv = w.visitMethod(Opcodes.ACC_STATIC, "<clinit>", "()V", null, null);
        mv.visitCode();
        mv.visitTypeInsn(Opcodes.NEW, "java/util/HashMap");
        mv.visitInsn(Opcodes.DUP);
        mv.visitMethodInsn(Opcodes.INVOKESPECIAL, "java/util/HashMap", "<init>", "()V", false);
        mv.visitFieldInsn(Opcodes.PUTSTATIC, STRINGS, "LITERALS", "Ljava/util/HashMap;");
        mv.visitInsn(Opcodes.RETURN);
        mv.visitMaxs(0, 0);
        mv.visitEnd();
        // A literal is one tree String per text, as JOP's linker makes it.
        mv = w.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, "literal", "(" + host + ")" + treeDesc, null, null);
        mv.visitCode();
        Label found = new Label();
        mv.visitFieldInsn(Opcodes.GETSTATIC, STRINGS, "LITERALS", "Ljava/util/HashMap;");
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "java/util/HashMap", "get", "(Ljava/lang/Object;)Ljava/lang/Object;", false);
        mv.visitInsn(Opcodes.DUP);
        mv.visitJumpInsn(Opcodes.IFNONNULL, found);
        mv.visitInsn(Opcodes.POP);
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        mv.visitMethodInsn(Opcodes.INVOKESTATIC, STRINGS, "fromHost", "(" + host + ")" + treeDesc, false);
        mv.visitVarInsn(Opcodes.ASTORE, 1);
        mv.visitFieldInsn(Opcodes.GETSTATIC, STRINGS, "LITERALS", "Ljava/util/HashMap;");
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        mv.visitVarInsn(Opcodes.ALOAD, 1);
        mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "java/util/HashMap", "put",
                "(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;", false);
        mv.visitInsn(Opcodes.POP);
        mv.visitVarInsn(Opcodes.ALOAD, 1);
        mv.visitInsn(Opcodes.ARETURN);
        mv.visitLabel(found);
        mv.visitTypeInsn(Opcodes.CHECKCAST, tree);
        mv.visitInsn(Opcodes.ARETURN);
        mv.visitMaxs(0, 0);
        mv.visitEnd();
        converter(w, "fromHost", host, treeDesc, "java/lang/String", tree);
        converter(w, "toHost", treeDesc, host, tree, "java/lang/String");
        w.visitEnd();
        return w.toByteArray();
    }

    /** `static TO name(FROM s)`: null stays null, else a copy of its characters. */
    static void converter(ClassWriter w, String name, String fromDesc, String toDesc, String from, String to) {
        MethodVisitor mv = w.visitMethod(Opcodes.ACC_PUBLIC | Opcodes.ACC_STATIC, name,
                "(" + fromDesc + ")" + toDesc, null, null);
        mv.visitCode();
        Label some = new Label();
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        mv.visitJumpInsn(Opcodes.IFNONNULL, some);
        mv.visitInsn(Opcodes.ACONST_NULL);
        mv.visitInsn(Opcodes.ARETURN);
        mv.visitLabel(some);
        mv.visitTypeInsn(Opcodes.NEW, to);
        mv.visitInsn(Opcodes.DUP);
        mv.visitVarInsn(Opcodes.ALOAD, 0);
        mv.visitMethodInsn(Opcodes.INVOKEVIRTUAL, from, "toCharArray", "()[C", false);
        mv.visitMethodInsn(Opcodes.INVOKESPECIAL, to, "<init>", "([C)V", false);
        mv.visitInsn(Opcodes.ARETURN);
        mv.visitMaxs(0, 0);
        mv.visitEnd();
    }
}
