package jopcal.corpus;

/** Searches, compares and slices strings: indexOf, equals, substring, hashCode. */
public class StringSearch {
    static final String TEXT = "the quick brown fox jumps over the lazy dog while the cat sleeps on the mat";
    static final String[] WORDS = { "the", "fox", "dog", "cat", "mat", "owl", "over", "sleeps" };

    public static void main(String[] args) {
        int found = 0;
        int hash = 0;
        for (int round = 0; round < 40; round++) {
            for (int w = 0; w < WORDS.length; w++) {
                int at = TEXT.indexOf(WORDS[w]);
                while (at >= 0) {
                    found++;
                    at = TEXT.indexOf(WORDS[w], at + 1);
                }
            }
            int start = 0;
            for (int i = 0; i <= TEXT.length(); i++) {
                if (i == TEXT.length() || TEXT.charAt(i) == ' ') {
                    String word = TEXT.substring(start, i);
                    for (int w = 0; w < WORDS.length; w++) {
                        if (word.equals(WORDS[w])) {
                            hash = hash * 31 + word.hashCode();
                        }
                    }
                    start = i + 1;
                }
            }
        }
        System.out.println(found);
        System.out.println(hash);
    }
}
