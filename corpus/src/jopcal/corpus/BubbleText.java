package jopcal.corpus;

/** Sorts an array of strings by compareTo and joins them: string objects as data. */
public class BubbleText {
    public static void main(String[] args) {
        String[] names = { "lift", "kfl", "udpip", "matrix", "queens", "aes", "raytrace", "ejip", "sieve",
                "crc", "fir", "pid", "bubble", "hanoi", "ackermann", "tokens" };
        int swaps = 0;
        for (int i = 0; i < names.length; i++) {
            for (int j = 0; j + 1 < names.length - i; j++) {
                if (names[j].compareTo(names[j + 1]) > 0) {
                    String t = names[j];
                    names[j] = names[j + 1];
                    names[j + 1] = t;
                    swaps++;
                }
            }
        }
        StringBuffer all = new StringBuffer();
        for (int i = 0; i < names.length; i++) {
            all.append(names[i]);
            all.append(' ');
        }
        System.out.println(swaps);
        System.out.println(all.toString());
    }
}
