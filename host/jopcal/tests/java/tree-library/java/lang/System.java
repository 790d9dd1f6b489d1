package java.lang;
public final class System {
    public static final java.io.PrintStream out = new java.io.PrintStream();
    public static void exit(int status) {
    }
}
