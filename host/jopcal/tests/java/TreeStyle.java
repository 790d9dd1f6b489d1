/**
 * Prints what a JOP tree's fixed-count harness prints: a label, then the
 * milliseconds of a call timed with currentTimeMillis, then "JVM exit!" comes
 * from the board.
 */
public class TreeStyle {
    static int work(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            s += i * i;
        }
        return s;
    }

    public static void main(String[] args) {
        System.out.println("Toy");
        int t1 = (int) System.currentTimeMillis();
        work(2000000);
        int t2 = (int) System.currentTimeMillis();
        System.out.print(t2 - t1);
        System.out.println(" ms");
    }
}
