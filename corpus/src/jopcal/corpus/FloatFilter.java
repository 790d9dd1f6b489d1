package jopcal.corpus;

/** A single-precision low-pass filter and its energy: float arithmetic and conversions. */
public class FloatFilter {
    public static void main(String[] args) {
        float y = 0f;
        float energy = 0f;
        float alpha = 0.125f;
        for (int i = 0; i < 300; i++) {
            float x = (i % 20) < 10 ? 1.0f : -1.0f;
            y = y + alpha * (x - y);
            energy += y * y;
        }
        System.out.println((int) (energy * 1000f));
        System.out.println((int) (y * 100000f));
    }
}
