package jopcal.limits;

/**
 * Recurses deeper than JOP's 256-word stack holds: the host JVM runs it, the processor
 * cannot, and jopcal names that limit.
 */
public class DeepRecursion {
    static int depth(int n) {
        return n == 0 ? 0 : 1 + depth(n - 1);
    }

    public static void main(String[] args) {
        System.out.println(depth(200));
    }
}
