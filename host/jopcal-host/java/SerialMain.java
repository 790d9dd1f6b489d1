package jopcal.host;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * jopcal's launcher of a JOP tree's program on the host: System.out (and
 * System.err, which on JOP is the same line) print through SerialLine, the
 * target's clock (jopcal.clock) is loaded, then the program's main runs.
 * Usage: SerialMain MAIN_CLASS ARGS...
 */
public final class SerialMain {
    private SerialMain() {
    }

    public static void main(String[] args) throws Throwable {
        PrintStream line = new PrintStream(new SerialLine(new FileOutputStream(FileDescriptor.out)), true);
        System.setOut(line);
        System.setErr(line);
        // The target's clock, read before the program starts (its parsing
        // is not the program's work): see the host's Native.TargetClock.
        if (System.getProperty("jopcal.clock") != null) {
            try {
                Class.forName("com.jopdesign.sys.Native").getMethod("loadTargetClock").invoke(null);
            } catch (ReflectiveOperationException e) {
                // Not jopcal's stand-in of Native: it reads no replayed clock.
            }
        }
        String[] rest = new String[args.length - 1];
        System.arraycopy(args, 1, rest, 0, rest.length);
        Class<?> program;
        try {
            program = ClassLoader.getSystemClassLoader().loadClass(args[0]);
        } catch (ClassNotFoundException e) {
            // As the java launcher says it, on its own stream.
            new PrintStream(new FileOutputStream(FileDescriptor.err), true)
                    .println("Error: Could not find or load main class " + args[0]);
            System.exit(1);
            return;
        }
        initialize(System.getProperty("jopcal.init"));
        Method main = mainOf(program);
        try {
            main.invoke(null, new Object[] {arguments(main.getParameterTypes()[0].getComponentType(), rest)});
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /**
     * The program's main: main(String[]), or, where the program runs with the
     * tree's library under its shadow names (see jopcal's ShadowLibrary),
     * main with an array of the tree's String.
     */
    private static Method mainOf(Class<?> program) throws NoSuchMethodException {
        for (Method m : program.getMethods()) {
            Class<?>[] p = m.getParameterTypes();
            if (m.getName().equals("main") && p.length == 1 && p[0].isArray()
                    && java.lang.reflect.Modifier.isStatic(m.getModifiers())) {
                return m;
            }
        }
        return program.getMethod("main", new Class<?>[] {String[].class});
    }

    /** The arguments as main takes them: the host's strings, or the tree's. */
    private static Object arguments(Class<?> element, String[] args) throws ReflectiveOperationException {
        if (element == String.class) {
            return args;
        }
        Object array = java.lang.reflect.Array.newInstance(element, args.length);
        Method convert = Class.forName("java.lang.jopcal$tree$Strings").getMethod("fromHost", String.class);
        for (int i = 0; i < args.length; i++) {
            java.lang.reflect.Array.set(array, i, convert.invoke(null, args[i]));
        }
        return array;
    }

    /**
     * JOP runs every class's static initializer before main: the classes
     * the file `list` names (one a line; jopcal writes it where the program
     * runs with the tree's library) are initialized here, before the
     * program's region, as they are on JOP.
     */
    private static void initialize(String list) throws java.io.IOException {
        if (list == null || list.isEmpty()) {
            return;
        }
        ClassLoader loader = ClassLoader.getSystemClassLoader();
        for (String name : java.nio.file.Files.readAllLines(java.nio.file.Paths.get(list))) {
            if (name.isEmpty()) {
                continue;
            }
            try {
                Class.forName(name, true, loader);
            } catch (ClassNotFoundException e) {
                // Not on the host: the program fails where it uses it.
            } catch (LinkageError e) {
                // Not loadable on the host: the program fails where it uses it.
            }
        }
    }
}
