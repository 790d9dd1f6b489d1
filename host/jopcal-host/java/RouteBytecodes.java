package jopcal.tools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * jopcal's bytecode router (run by jopcal with ASM on the class path): in
 * every class file under the given directories, each bytecode of the list
 * becomes a call of the bridge's static method of the same name, which
 * hands the operands to the JOP runtime's own routine. ASM relocates the
 * branches and the stack map frames the longer instruction moves. Inside
 * the routine of a bytecode (com/jopdesign/sys/JVM.f_NAME) that bytecode
 * stays the host's: routed, it would call its own routine again.
 *
 * With --methods FILE PREFIX, each static call of a method FILE lists (a
 * line "OWNER NAME DESCRIPTOR": the JOP tree's version of a JDK method,
 * merged into the JDK's class under PREFIX + NAME by MergeStatics) calls the
 * tree's version instead: the host JVM runs the JDK's own Math.sin as an
 * intrinsic, never its bytecodes. In the owner class itself only the
 * tree's methods are rewritten; the JDK's keep calling the JDK's.
 *
 * Nothing in the host's stand-in of com.jopdesign.sys.Native is rewritten.
 *
 * Usage: RouteBytecodes BRIDGE OPCODE=NAME:DESCRIPTOR,... [--methods FILE PREFIX] DIR...
 * Prints one line: the sites routed and the classes changed.
 */
public final class RouteBytecodes {
    private RouteBytecodes() {
    }

    /** The host's stand-in of JOP's Native, and its nested classes. */
    private static final String NATIVE = "com/jopdesign/sys/Native";

    public static void main(String[] args) throws IOException {
        if (args.length < 3) {
            System.err.println("usage: RouteBytecodes BRIDGE OPCODE=NAME:DESCRIPTOR,... [--methods FILE PREFIX] DIR...");
            System.exit(2);
        }
        final String bridge = args[0];
        final String runtime = "com/jopdesign/sys/JVM";
        final Map<Integer, String[]> routes = new HashMap<>();
        for (String r : args[1].split(",")) {
            int eq = r.indexOf('=');
            int colon = r.indexOf(':');
            routes.put(Integer.parseInt(r.substring(0, eq)),
                    new String[] {r.substring(eq + 1, colon), r.substring(colon + 1)});
        }
        final Set<String> methods = new HashSet<>();
        String prefixArg = "";
        int first = 2;
        if (args.length > 4 && args[2].equals("--methods")) {
            for (String line : Files.readAllLines(Paths.get(args[3]))) {
                if (!line.trim().isEmpty()) {
                    methods.add(line.trim());
                }
            }
            prefixArg = args[4];
            first = 5;
        }
        final String prefix = prefixArg;
        long sites = 0;
        int classes = 0;
        for (int i = first; i < args.length; i++) {
            List<Path> files;
            try (Stream<Path> walk = Files.walk(Paths.get(args[i]))) {
                files = walk.filter(p -> p.toString().endsWith(".class")).collect(Collectors.toList());
            }
            for (Path file : files) {
                byte[] in = Files.readAllBytes(file);
                ClassReader reader = new ClassReader(in);
                // The bridge, and the host's stand-in Native: the host's own
                // link to its clock and memory, whose calls of the JDK's
                // clock must stay the JDK's (routed, the tree's clock would
                // read Native again).
                if (reader.getClassName().equals(bridge) || reader.getClassName().startsWith(NATIVE)) {
                    continue;
                }
                ClassWriter writer = new ClassWriter(reader, 0);
                final long[] count = {0};
                final String self = reader.getClassName();
                final boolean inRuntime = self.equals(runtime);
                reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
                    @Override
                    public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] ex) {
                        final String method = name;
                        final boolean treeMethod = !prefix.isEmpty() && name.startsWith(prefix);
                        return new MethodVisitor(Opcodes.ASM9, super.visitMethod(access, name, desc, sig, ex)) {
                            @Override
                            public void visitMethodInsn(int opcode, String owner, String callee, String calleeDesc, boolean itf) {
                                // A merged method's call of the JDK method it
                                // stands for (jopcal's arraycopy, which copies
                                // with the JDK's) stays the JDK's.
                                boolean itself = owner.equals(self) && method.equals(prefix + callee)
                                        && desc.equals(calleeDesc);
                                if (opcode == Opcodes.INVOKESTATIC && methods.contains(owner + " " + callee + " " + calleeDesc)
                                        && (!owner.equals(self) || treeMethod) && !itself) {
                                    count[0]++;
                                    callee = prefix + callee;
                                }
                                super.visitMethodInsn(opcode, owner, callee, calleeDesc, itf);
                            }

                            @Override
                            public void visitInsn(int opcode) {
                                String[] to = routes.get(opcode);
                                if (to != null && inRuntime && method.equals("f_" + to[0])) {
                                    to = null;
                                }
                                if (to == null) {
                                    super.visitInsn(opcode);
                                } else {
                                    count[0]++;
                                    super.visitMethodInsn(Opcodes.INVOKESTATIC, bridge, to[0], to[1], false);
                                }
                            }
                        };
                    }
                }, 0);
                if (count[0] > 0) {
                    Path tmp = file.resolveSibling(file.getFileName() + ".routing");
                    Files.write(tmp, writer.toByteArray());
                    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                    sites += count[0];
                    classes++;
                }
            }
        }
        System.out.println(sites + " sites in " + classes + " classes");
    }
}
