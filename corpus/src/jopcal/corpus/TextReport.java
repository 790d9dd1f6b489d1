package jopcal.corpus;

import java.util.Hashtable;

/** Words of a text: cleaned, counted in a Hashtable, sorted, and a report built in a StringBuffer. */
public class TextReport {
    static final String TEXT = "  The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away, "
            + "and the quick dog follows the brown fox over the hill.  A lazy afternoon for a lazy dog.  ";

    public static void main(String[] args) {
        int total = 0;
        String report = "";
        for (int round = 0; round < 12; round++) {
            Hashtable counts = new Hashtable();
            String[] words = new String[64];
            int n = 0;
            String text = TEXT.trim();
            int from = 0;
            while (from < text.length()) {
                int space = text.indexOf(' ', from);
                if (space < 0) space = text.length();
                String w = text.substring(from, space);
                from = space + 1;
                StringBuffer clean = new StringBuffer();
                for (int i = 0; i < w.length(); i++) {
                    char c = w.charAt(i);
                    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) clean.append(c);
                }
                if (clean.length() == 0) continue;
                String word = clean.toString().toLowerCase();
                Integer seen = (Integer) counts.get(word);
                if (seen == null) {
                    counts.put(word, new Integer(1));
                    words[n++] = word;
                } else {
                    counts.put(word, new Integer(seen.intValue() + 1));
                }
            }
            for (int i = 1; i < n; i++) {
                String w = words[i];
                int j = i - 1;
                while (j >= 0 && words[j].compareTo(w) > 0) {
                    words[j + 1] = words[j];
                    j--;
                }
                words[j + 1] = w;
            }
            StringBuffer out = new StringBuffer();
            for (int i = 0; i < n; i++) {
                int c = ((Integer) counts.get(words[i])).intValue();
                if (c > 1) {
                    out.append(words[i].toUpperCase()).append('=').append(c).append(' ');
                }
            }
            out.insert(0, "rep: ");
            report = out.toString();
            total += report.length() + n;
        }
        System.out.println(report);
        System.out.println("total " + total);
    }
}
