package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/**
 * Allocation-heavy code: builds linked lists of small objects and small
 * arrays, reverses them and sums them, leaving all of it as garbage.
 */
public final class Alloc extends Workload {
    static final class Node {
        final int value;
        final int[] payload;
        Node next;

        Node(int value, Node next) {
            this.value = value;
            this.next = next;
            this.payload = new int[4];
            payload[value & 3] = value;
        }
    }

    private static final int LENGTH = 100;

    public static void main(String[] args) {
        Harness.runOne(new Alloc());
    }

    public String name() {
        return "Alloc";
    }

    public int iterations() {
        return 6;
    }

    static Node build(int n) {
        Node head = null;
        for (int i = 1; i <= n; i++) {
            head = new Node(i, head);
        }
        return head;
    }

    static Node reverse(Node head) {
        Node prev = null;
        while (head != null) {
            Node next = head.next;
            head.next = prev;
            prev = head;
            head = next;
        }
        return prev;
    }

    static int sum(Node head) {
        int s = 0;
        int pos = 1;
        while (head != null) {
            s += head.value * pos + head.payload[head.value & 3];
            pos++;
            head = head.next;
        }
        return s;
    }

    public int run(int iterations) {
        int total = 0;
        for (int it = 0; it < iterations; it++) {
            total += sum(reverse(build(LENGTH)));
        }
        return total;
    }

    /** After reversal node i sits at position i: sum of i*i + i for i = 1..n. */
    public int expected() {
        int n = LENGTH;
        int squares = n * (n + 1) * (2 * n + 1) / 6;
        int plain = n * (n + 1) / 2;
        return (squares + plain) * iterations();
    }
}
