package jopcal.corpus;

/** Recursion of modest depth: mutual recursion, Ackermann's function, the towers of Hanoi. */
public class Recursion {
    static int moves;

    static boolean isEven(int n) {
        return n == 0 || isOdd(n - 1);
    }

    static boolean isOdd(int n) {
        return n != 0 && isEven(n - 1);
    }

    static int ack(int m, int n) {
        if (m == 0) {
            return n + 1;
        }
        if (n == 0) {
            return ack(m - 1, 1);
        }
        return ack(m - 1, ack(m, n - 1));
    }

    static void hanoi(int n, int from, int to, int via) {
        if (n == 0) {
            return;
        }
        hanoi(n - 1, from, via, to);
        moves++;
        hanoi(n - 1, via, to, from);
    }

    public static void main(String[] args) {
        int evens = 0;
        for (int i = 0; i < 12; i++) {
            if (isEven(i)) {
                evens++;
            }
        }
        hanoi(9, 1, 3, 2);
        System.out.println(evens);
        System.out.println(ack(2, 3));
        System.out.println(moves);
    }
}
