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
        Method main = program.getMethod("main", new Class<?>[] {String[].class});
        try {
            main.invoke(null, new Object[] {rest});
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
