package jopcal.corpus;

import java.util.Vector;

/** A job queue kept in a Vector: urgent jobs inserted near the front, work taken from the front. */
public class JobQueue {
    static class Job {
        final int id;
        final int cost;
        final boolean urgent;
        Job(int id, int cost, boolean urgent) { this.id = id; this.cost = cost; this.urgent = urgent; }
    }

    public static void main(String[] args) {
        Vector queue = new Vector();
        int seed = 7;
        int done = 0, work = 0, urgentSeen = 0, maxLen = 0;
        for (int step = 0; step < 1500; step++) {
            seed = seed * 69069 + 1;
            int r = (seed >>> 8) & 255;
            if (r < 150) {
                boolean urgent = r < 30;
                Job j = new Job(step, 1 + (r & 15), urgent);
                if (urgent) {
                    int at = 0;
                    while (at < queue.size() && ((Job) queue.elementAt(at)).urgent) at++;
                    queue.insertElementAt(j, at);
                    urgentSeen++;
                } else {
                    queue.addElement(j);
                }
            } else if (queue.size() > 0) {
                Job j = (Job) queue.elementAt(0);
                queue.removeElementAt(0);
                work += j.cost;
                done++;
            }
            if (queue.size() > maxLen) maxLen = queue.size();
        }
        System.out.println("done " + done + " work " + work + " urgent " + urgentSeen + " left " + queue.size() + " max " + maxLen);
    }
}
