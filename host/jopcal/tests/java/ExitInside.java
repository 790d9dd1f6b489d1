// Calls System.exit inside the profiled region (main): the profile must still
// be written, marked incomplete, and the failure named.
public class ExitInside {
    static int work(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) {
            s += i;
        }
        return s;
    }

    public static void main(String[] args) {
        int s = work(100);
        System.exit(s == 4950 ? 7 : 8);
    }
}
