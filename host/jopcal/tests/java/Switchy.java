/**
 * JDK methods with switches (Long's on the radix, Math's on the exponent),
 * whose stack maps the JVM drops when it does not verify the boot loader's
 * classes (-Xshare:off, as under --patch-module): both profilers must count
 * them alike.
 */
public class Switchy {
    static int sink;

    public static void run() {
        for (int i = 0; i < 20; i++) {
            sink += Long.toUnsignedString(-1L - i, (i & 1) == 0 ? 2 : 10).length();
            sink += Math.ulp(1.0e300 * i) > 0.5 ? 1 : 0;
        }
    }

    public static void main(String[] args) {
        // Loaded before the region: class loading is the JDK's own work.
        Long.toUnsignedString(-1L, 10);
        Math.ulp(1.0);
        run();
        System.out.println(sink);
    }
}
