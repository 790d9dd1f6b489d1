// jopcal's resident ecj: one JVM that compiles for every `ecj` an image
// build runs, so each compile costs the compiler's work and not its start
// (a JVM, ecj's classes, the JIT warming up: about 0.4 s of a 0.5 s run).
// jopcal starts it with a Unix socket's path and holds its standard input:
// when jopcal ends, so does this. Each connection is one compile: the
// caller's working directory and its arguments in, ecj's exit status and
// output out. Arguments it does not know are left to a fresh ecj.
import java.io.*;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.*;
import org.eclipse.jdt.core.compiler.batch.BatchCompiler;

public final class JopcalEcjServer {
    /** Options whose value is a path or a list of paths: made absolute against the caller's directory. */
    private static final Set<String> PATH_OPTIONS = Set.of(
        "-d", "-sourcepath", "-classpath", "-cp", "-bootclasspath", "-extdirs", "-endorseddirs", "-s", "-log");
    /** Options whose value is not a path: kept as they are. */
    private static final Set<String> VALUE_OPTIONS = Set.of("-source", "-target", "-encoding", "--release", "-maxProblems", "-repeat");
    /** Options without a value. */
    private static final Set<String> FLAGS = Set.of(
        "-nowarn", "-g", "-O", "-deprecation", "-proceedOnError", "-preserveAllLocals", "-verbose", "-time",
        "-noExit", "-Xemacs", "-1.3", "-1.4", "-1.5", "-1.6", "-1.7", "-1.8", "-8", "-9", "-10", "-11");
    /** One compile at a time: the outputs are those of ecj run alone. */
    private static final Object ONE_AT_A_TIME = new Object();

    public static void main(String[] args) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(Path.of(args[0])));
        Thread parent = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                }
            } catch (IOException e) {
                // gone all the same
            }
            System.exit(0);
        });
        parent.setDaemon(true);
        parent.start();
        System.out.println("ready");
        System.out.flush();
        while (true) {
            SocketChannel c = server.accept();
            Thread t = new Thread(() -> serve(c));
            t.setDaemon(true);
            t.start();
        }
    }

    private static void serve(SocketChannel c) {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Channels.newInputStream(c)));
             DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Channels.newOutputStream(c)))) {
            int n = in.readInt();
            String[] words = new String[n];
            for (int i = 0; i < n; i++) {
                byte[] b = new byte[in.readInt()];
                in.readFully(b);
                words[i] = new String(b, StandardCharsets.UTF_8);
            }
            String[] argv = absolute(new File(words[0]), Arrays.copyOfRange(words, 1, n));
            if (argv == null) {
                out.writeByte(1);
                return;
            }
            ByteArrayOutputStream o = new ByteArrayOutputStream();
            ByteArrayOutputStream e = new ByteArrayOutputStream();
            boolean ok;
            synchronized (ONE_AT_A_TIME) {
                PrintWriter po = new PrintWriter(new OutputStreamWriter(o));
                PrintWriter pe = new PrintWriter(new OutputStreamWriter(e));
                ok = BatchCompiler.compile(argv, po, pe, null);
                po.flush();
                pe.flush();
            }
            out.writeByte(0);
            // ecj's own main ends with System.exit(-1) on errors.
            out.writeInt(ok ? 0 : 255);
            out.writeInt(o.size());
            o.writeTo(out);
            out.writeInt(e.size());
            e.writeTo(out);
        } catch (IOException | RuntimeException ex) {
            // The caller sees the connection end, and runs ecj itself.
        }
    }

    /** The arguments with every path absolute, or null where one is not understood. */
    static String[] absolute(File cwd, String[] args) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (PATH_OPTIONS.contains(a) && i + 1 < args.length) {
                out.add(a);
                out.add(pathList(cwd, args[++i]));
            } else if (VALUE_OPTIONS.contains(a) && i + 1 < args.length) {
                out.add(a);
                out.add(args[++i]);
            } else if (FLAGS.contains(a) || a.startsWith("-g:") || a.startsWith("-warn:")) {
                out.add(a);
            } else if (a.startsWith("-") || a.startsWith("@") || a.isEmpty()) {
                return null;
            } else {
                out.add(path(cwd, a));
            }
        }
        return out.toArray(new String[0]);
    }

    private static String pathList(File cwd, String list) {
        StringJoiner j = new StringJoiner(File.pathSeparator);
        for (String p : list.split(File.pathSeparator, -1)) {
            j.add(p.isEmpty() ? p : path(cwd, p));
        }
        return j.toString();
    }

    private static String path(File cwd, String p) {
        File f = new File(p);
        return f.isAbsolute() ? p : new File(cwd, p).getPath();
    }
}
