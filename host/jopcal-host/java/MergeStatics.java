package jopcal.tools;

import java.io.IOException;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.FieldVisitor;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * jopcal's merger of the JOP tree's version of a JDK class of static
 * methods (run by jopcal with ASM on the class path). The tree's
 * java.lang.Math has only the methods JOP's programs use, and the host
 * JDK's own code calls the rest, so the tree's version cannot replace the
 * JDK's. The merged class is the JDK's with the tree's methods added under
 * PREFIX + their name: the JVM runs the JDK's Math.sin as an intrinsic
 * whatever its bytecodes, a renamed method as bytecodes. RouteBytecodes
 * then points the program's calls at the renamed methods, and the profile
 * drops the prefix again (jopcal_profile::routed).
 *
 * Usage: MergeStatics PREFIX CLASS_FILE[=JDK_CLASS]... (each the tree's
 * version, compiled; merged in place). With =JDK_CLASS (an internal name)
 * the file holds some of the tree's methods of that class under another
 * class's name (the tree's System has its clock, which the host can run,
 * beside its streams, which it cannot): they are merged into JDK_CLASS, the
 * result written beside the file as that class, and the file removed. A
 * class whose JDK version has instance fields is left to replace the JDK's
 * whole. Prints "OWNER NAME DESCRIPTOR"
 * per merged method. Exits 3 with one line when a class cannot be merged.
 */
public final class MergeStatics {
    private MergeStatics() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: MergeStatics PREFIX CLASS_FILE...");
            System.exit(2);
        }
        String prefix = args[0];
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        for (int i = 1; i < args.length; i++) {
            String arg = args[i];
            String into = null;
            int eq = arg.lastIndexOf('=');
            if (eq > 0) {
                into = arg.substring(eq + 1);
                arg = arg.substring(0, eq);
            }
            Path file = Paths.get(arg);
            ClassReader tree = new ClassReader(Files.readAllBytes(file));
            String name = into != null ? into : tree.getClassName();
            Path hostFile = jrt.getPath("modules", "java.base", name + ".class");
            if (!Files.isRegularFile(hostFile)) {
                fail(name + ": the host JDK's java.base has no such class");
            }
            ClassReader host = new ClassReader(Files.readAllBytes(hostFile));
            if (!instanceFields(host).isEmpty()) {
                continue;
            }
            List<String> fields = instanceFields(tree);
            if (!fields.isEmpty()) {
                fail(name + ": the JDK's is a class of static methods and the tree's has the instance field "
                        + fields.get(0) + ": they cannot be merged");
            }
            List<String> merged = new ArrayList<>();
            byte[] out = merge(host, tree, prefix, merged);
            Path to = into == null ? file : file.resolveSibling(into.substring(into.lastIndexOf('/') + 1) + ".class");
            Path tmp = to.resolveSibling(to.getFileName() + ".merging");
            Files.write(tmp, out);
            Files.move(tmp, to, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            if (!to.equals(file)) {
                Files.delete(file);
            }
            for (String m : merged) {
                System.out.println(name + " " + m);
            }
        }
    }

    private static void fail(String why) {
        System.err.println(why);
        System.exit(3);
    }

    private static List<String> instanceFields(ClassReader r) {
        final List<String> found = new ArrayList<>();
        r.accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public FieldVisitor visitField(int access, String field, String desc, String sig, Object value) {
                if ((access & Opcodes.ACC_STATIC) == 0) {
                    found.add(field);
                }
                return null;
            }
        }, ClassReader.SKIP_CODE);
        return found;
    }

    /**
     * The host's class with the tree's methods (all but its constructor and
     * static initializer) added as PREFIX + name, and the tree's static
     * fields the host lacks (a tree's field of a host field's name must be
     * the same constant, or the tree's code would read another value).
     */
    static byte[] merge(ClassReader host, final ClassReader tree, final String prefix, final List<String> merged) {
        final java.util.Map<String, String> hostFields = new java.util.HashMap<>();
        final String name = host.getClassName();
        host.accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public FieldVisitor visitField(int access, String field, String desc, String sig, Object value) {
                hostFields.put(field, desc + " " + value);
                return null;
            }
        }, ClassReader.SKIP_CODE);
        final ClassWriter out = new ClassWriter(0);
        host.accept(new ClassVisitor(Opcodes.ASM9, out) {
            @Override
            public void visitEnd() {
                tree.accept(new ClassVisitor(Opcodes.ASM9) {
                    @Override
                    public FieldVisitor visitField(int access, String field, String desc, String sig, Object value) {
                        String h = hostFields.get(field);
                        if (h == null) {
                            return out.visitField(access, field, desc, sig, value);
                        }
                        if (value == null || !h.equals(desc + " " + value)) {
                            fail(name + ": the tree's field " + field + " is not the JDK's constant: they cannot be merged");
                        }
                        return null;
                    }

                    @Override
                    public MethodVisitor visitMethod(int access, String method, String desc, String sig, String[] ex) {
                        if (method.equals("<init>")) {
                            return null;
                        }
                        if (method.equals("<clinit>")) {
                            fail(name + ": the tree's version initializes static fields: it cannot be merged with the JDK's");
                        }
                        merged.add(method + " " + desc);
                        final String self = tree.getClassName();
                        // Under another name, the tree's references to its own class are the JDK class's.
                        return new MethodVisitor(Opcodes.ASM9, out.visitMethod(access, prefix + method, desc, sig, ex)) {
                            @Override
                            public void visitMethodInsn(int op, String owner, String m, String d, boolean itf) {
                                super.visitMethodInsn(op, owner.equals(self) ? name : owner, m, d, itf);
                            }

                            @Override
                            public void visitFieldInsn(int op, String owner, String f, String d) {
                                super.visitFieldInsn(op, owner.equals(self) ? name : owner, f, d);
                            }
                        };
                    }
                }, 0);
                super.visitEnd();
            }
        }, 0);
        return out.toByteArray();
    }
}
