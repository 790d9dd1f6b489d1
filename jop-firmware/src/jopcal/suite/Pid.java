package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/**
 * A fixed-point (Q16) PID controller closing the loop around a simulated
 * first-order plant with a setpoint that steps every 100 ticks; anti-windup
 * clamps the integrator and the actuator saturates.
 */
public final class Pid extends Workload {
    private static final int ONE = 1 << 16;
    private static final int STEPS = 400;
    private static final int KP = ONE * 3 / 4;
    private static final int KI = ONE / 16;
    private static final int KD = ONE / 4;
    private static final int I_LIMIT = 200 * ONE;
    private static final int U_LIMIT = 50 * ONE;

    public static void main(String[] args) {
        Harness.runOne(new Pid());
    }

    public String name() {
        return "Pid";
    }

    public int iterations() {
        return 4;
    }

    static int mulQ16(int a, int b) {
        return (int) (((long) a * b) >> 16);
    }

    static int clamp(int v, int limit) {
        if (v > limit) {
            return limit;
        }
        if (v < -limit) {
            return -limit;
        }
        return v;
    }

    /** Returns the sum of absolute tracking errors (in whole units). */
    static int control() {
        int y = 0;
        int integral = 0;
        int lastError = 0;
        int errorSum = 0;
        for (int t = 0; t < STEPS; t++) {
            int setpoint = ((t / 100) & 1) == 0 ? 20 * ONE : -10 * ONE;
            int error = setpoint - y;
            integral = clamp(integral + mulQ16(KI, error), I_LIMIT);
            int derivative = error - lastError;
            lastError = error;
            int u = clamp(mulQ16(KP, error) + integral + mulQ16(KD, derivative), U_LIMIT);
            // plant: y += (u - y) / 8
            y += (u - y) >> 3;
            int e = error >> 16;
            errorSum += e < 0 ? -e : e;
        }
        return errorSum;
    }

    public int run(int iterations) {
        int sum = 0;
        for (int it = 0; it < iterations; it++) {
            sum += control();
        }
        return sum;
    }

    public int expected() {
        // Deterministic fixed-point arithmetic; the value is the host JVM's result.
        return 1723 * iterations();
    }
}
