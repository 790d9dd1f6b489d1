package jopcal.corpus;

/** Builds singly linked lists, reverses them and drops them: allocation and the collector. */
public class ListReverse {
    static final class Node {
        int value;
        Node next;

        Node(int value, Node next) {
            this.value = value;
            this.next = next;
        }
    }

    public static void main(String[] args) {
        int check = 0;
        for (int round = 0; round < 60; round++) {
            Node head = null;
            for (int i = 0; i < 200; i++) {
                head = new Node(i * round, head);
            }
            Node prev = null;
            while (head != null) {
                Node next = head.next;
                head.next = prev;
                prev = head;
                head = next;
            }
            for (Node n = prev; n != null; n = n.next) {
                check += n.value & 7;
            }
        }
        System.out.println(check);
    }
}
