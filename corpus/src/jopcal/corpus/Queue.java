package jopcal.corpus;

/** A ring-buffer message queue of objects between a producer and a consumer step. */
public class Queue {
    static final class Message {
        final int id;
        final int[] payload;

        Message(int id, int size) {
            this.id = id;
            this.payload = new int[size];
            for (int i = 0; i < size; i++) {
                payload[i] = id ^ i;
            }
        }
    }

    private final Message[] ring = new Message[16];
    private int head, tail, size;

    boolean offer(Message m) {
        if (size == ring.length) {
            return false;
        }
        ring[tail] = m;
        tail = (tail + 1) & 15;
        size++;
        return true;
    }

    Message poll() {
        if (size == 0) {
            return null;
        }
        Message m = ring[head];
        ring[head] = null;
        head = (head + 1) & 15;
        size--;
        return m;
    }

    public static void main(String[] args) {
        Queue q = new Queue();
        int produced = 0, dropped = 0, sum = 0;
        for (int tick = 0; tick < 400; tick++) {
            for (int k = 0; k < 3; k++) {
                if (q.offer(new Message(produced, 1 + (produced & 7)))) {
                    produced++;
                } else {
                    dropped++;
                }
            }
            for (int k = 0; k < 2 + (tick & 1); k++) {
                Message m = q.poll();
                if (m != null) {
                    for (int i = 0; i < m.payload.length; i++) {
                        sum += m.payload[i];
                    }
                }
            }
        }
        System.out.println(produced);
        System.out.println(dropped);
        System.out.println(sum);
    }
}
