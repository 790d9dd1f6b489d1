package jopcal.corpus;

/** Mean and variance of a series in double precision, with a square root by Newton's method. */
public class DoubleStats {
    static double sqrt(double v) {
        double r = v > 1 ? v / 2 : 1;
        for (int i = 0; i < 12; i++) {
            r = 0.5 * (r + v / r);
        }
        return r;
    }

    public static void main(String[] args) {
        double sum = 0;
        double sumSq = 0;
        int n = 80;
        for (int i = 0; i < n; i++) {
            double v = (i * 37 % 101) / 4.0 + 0.25;
            sum += v;
            sumSq += v * v;
        }
        double mean = sum / n;
        double var = sumSq / n - mean * mean;
        System.out.println((int) (mean * 1000));
        System.out.println((int) (sqrt(var) * 1000));
    }
}
