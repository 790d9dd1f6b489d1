package jopcal.corpus;

/** Allocates many short-lived arrays of different sizes: enough to make the collector run. */
public class Garbage {
    public static void main(String[] args) {
        int check = 0;
        int[] keep = null;
        for (int i = 0; i < 1500; i++) {
            int[] a = new int[16 + (i % 48)];
            for (int k = 0; k < a.length; k += 4) {
                a[k] = i + k;
            }
            char[] c = new char[8 + (i & 15)];
            c[0] = (char) i;
            check += a[a.length - 4 - (a.length & 3)] + c[0];
            if ((i & 127) == 0) {
                keep = a;
            }
        }
        System.out.println(check);
        System.out.println(keep.length);
    }
}
