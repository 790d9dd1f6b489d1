package jopcal.corpus;

import java.util.Vector;

/** A discrete event simulation: a binary heap of events keyed by long times, listeners in a Vector. */
public class EventQueue {
    interface Listener { void on(Event e); }

    static final class Event {
        final long at;
        final int kind;
        Event(long at, int kind) { this.at = at; this.kind = kind; }
    }

    static Event[] heap = new Event[256];
    static int size;

    static void push(Event e) {
        int i = size++;
        heap[i] = e;
        while (i > 0) {
            int p = (i - 1) >> 1;
            if (heap[p].at <= heap[i].at) break;
            Event t = heap[p]; heap[p] = heap[i]; heap[i] = t;
            i = p;
        }
    }

    static Event pop() {
        Event top = heap[0];
        heap[0] = heap[--size];
        heap[size] = null;
        int i = 0;
        for (;;) {
            int l = 2 * i + 1, r = l + 1, m = i;
            if (l < size && heap[l].at < heap[m].at) m = l;
            if (r < size && heap[r].at < heap[m].at) m = r;
            if (m == i) break;
            Event t = heap[m]; heap[m] = heap[i]; heap[i] = t;
            i = m;
        }
        return top;
    }

    static long clock;
    static int[] seen = new int[4];

    public static void main(String[] args) {
        Vector listeners = new Vector();
        listeners.addElement(new Listener() { public void on(Event e) { seen[e.kind]++; } });
        listeners.addElement(new Listener() {
            public void on(Event e) { if (e.kind < 3 && size < 200) push(new Event(e.at + 3 + e.kind * 7, e.kind + 1)); }
        });
        for (int i = 0; i < 40; i++) push(new Event(i * 5L, 0));
        int handled = 0;
        while (size > 0 && handled < 3000) {
            Event e = pop();
            clock = e.at;
            for (int k = 0; k < listeners.size(); k++) ((Listener) listeners.elementAt(k)).on(e);
            handled++;
        }
        System.out.println("handled " + handled + " clock " + clock + " seen " + seen[0] + "," + seen[1] + "," + seen[2] + "," + seen[3]);
    }
}
