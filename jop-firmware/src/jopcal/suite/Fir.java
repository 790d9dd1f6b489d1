package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/**
 * 16-tap FIR low-pass filter in Q15 fixed point with a circular delay line;
 * checked against a direct convolution over the whole input.
 */
public final class Fir extends Workload {
    private static final int TAPS = 16;
    private static final int SAMPLES = 200;
    private int[] coeff;
    private int[] input;
    private int[] delay;

    public static void main(String[] args) {
        Harness.runOne(new Fir());
    }

    public String name() {
        return "Fir";
    }

    public int iterations() {
        return 4;
    }

    public void setup() {
        coeff = new int[TAPS];
        // A symmetric triangular window, scaled so the taps sum to about 1.0 in Q15.
        int total = 0;
        for (int i = 0; i < TAPS; i++) {
            int w = i < TAPS / 2 ? i + 1 : TAPS - i;
            coeff[i] = w;
            total += w;
        }
        for (int i = 0; i < TAPS; i++) {
            coeff[i] = coeff[i] * 32768 / total;
        }
        input = new int[SAMPLES];
        int x = 12345;
        for (int i = 0; i < SAMPLES; i++) {
            x = x * 69069 + 1;
            // a square wave plus noise, 12-bit signed
            input[i] = ((i & 16) != 0 ? 1500 : -1500) + ((x >> 20) & 511) - 256;
        }
        delay = new int[TAPS];
    }

    public int run(int iterations) {
        int acc = 0;
        for (int it = 0; it < iterations; it++) {
            for (int i = 0; i < TAPS; i++) {
                delay[i] = 0;
            }
            int head = 0;
            for (int n = 0; n < SAMPLES; n++) {
                delay[head] = input[n];
                int sum = 0;
                int idx = head;
                for (int k = 0; k < TAPS; k++) {
                    sum += coeff[k] * delay[idx];
                    idx = idx == 0 ? TAPS - 1 : idx - 1;
                }
                head = head == TAPS - 1 ? 0 : head + 1;
                acc += sum >> 15;
            }
        }
        return acc;
    }

    public int expected() {
        int acc = 0;
        for (int n = 0; n < SAMPLES; n++) {
            int sum = 0;
            for (int k = 0; k < TAPS && k <= n; k++) {
                sum += coeff[k] * input[n - k];
            }
            acc += sum >> 15;
        }
        return acc * iterations();
    }
}
