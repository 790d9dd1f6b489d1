package jbe;

/** A moving-average filter over a synthetic sensor signal, with virtual dispatch per sample. */
public class BenchFilter extends BenchMark {
    interface Stage {
        int step(int x);
    }

    static final class Average implements Stage {
        private final int[] window = new int[8];
        private int pos;
        private int sum;

        public int step(int x) {
            sum += x - window[pos];
            window[pos] = x;
            pos = (pos + 1) & 7;
            return sum >> 3;
        }
    }

    static final class Clamp implements Stage {
        public int step(int x) {
            return x < 0 ? 0 : (x > 1000 ? 1000 : x);
        }
    }

    private final Stage[] stages = {new Average(), new Clamp()};

    public int test(int cnt) {
        int out = 0;
        for (int i = 0; i < cnt; i++) {
            int x = ((i * 37) & 1023) - 12;
            for (int s = 0; s < stages.length; s++) {
                x = stages[s].step(x);
            }
            out += x;
        }
        return out;
    }
}
