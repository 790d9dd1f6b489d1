/**
 * Arrays of references made in methods with no call, field access or type
 * check: what `anewarray` and `multianewarray` make is named only in the
 * constant pool, which the single-step agent must fetch for them too.
 */
public class RefArrays {
    static Object[] objects(int n) {
        Object[] last = null;
        for (int i = 0; i < n; i++) {
            last = new Object[2];
        }
        return last;
    }

    static int[][] grids(int n) {
        int[][] last = null;
        for (int i = 0; i < n; i++) {
            last = new int[2][3];
        }
        return last;
    }

    // The region: nothing but the arrays (the printing, outside it, allocates too).
    static int run() {
        return objects(100).length + grids(50).length;
    }

    public static void main(String[] args) {
        System.out.println("arrays " + run());
    }
}
