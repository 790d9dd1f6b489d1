package jembench.application;

import jembench.SerialBenchmark;

/** A ring buffer of message objects: allocation-free producer/consumer traffic. */
public class BenchQueue extends SerialBenchmark {
    static final class Msg {
        int id;
        int payload;
    }

    private final Msg[] ring = new Msg[16];
    private int head;
    private int tail;

    public BenchQueue() {
        for (int i = 0; i < ring.length; i++) {
            ring[i] = new Msg();
        }
    }

    private void put(int id, int payload) {
        Msg m = ring[head];
        m.id = id;
        m.payload = payload;
        head = (head + 1) & 15;
    }

    private int take() {
        Msg m = ring[tail];
        tail = (tail + 1) & 15;
        return m.id ^ m.payload;
    }

    public int perform(int cnt) {
        int sum = 0;
        for (int i = 0; i < cnt; i++) {
            for (int k = 0; k < 8; k++) {
                put(i + k, i * 3 + k);
            }
            for (int k = 0; k < 8; k++) {
                sum += take();
            }
        }
        return sum;
    }
}
