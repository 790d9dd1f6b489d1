// Never ends: the virtual board's cycle limit must stop it.
public class Spin {
    static int n;

    public static void main(String[] args) {
        while (n >= 0) {
            n = (n + 1) & 0xffff;
        }
    }
}
