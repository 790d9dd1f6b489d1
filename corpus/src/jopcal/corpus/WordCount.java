package jopcal.corpus;

import java.util.Hashtable;
import java.util.Vector;

/** Counts words of a text with a Hashtable, keeps first occurrences in a Vector. */
public class WordCount {
    static final String TEXT = "one two three two three three four four four four five five five five five "
            + "six seven eight nine ten one two three alpha beta gamma delta alpha beta alpha";

    public static void main(String[] args) {
        Hashtable counts = new Hashtable();
        Vector order = new Vector();
        for (int round = 0; round < 20; round++) {
            int start = 0;
            for (int i = 0; i <= TEXT.length(); i++) {
                if (i == TEXT.length() || TEXT.charAt(i) == ' ') {
                    if (i > start) {
                        String w = TEXT.substring(start, i);
                        Integer c = (Integer) counts.get(w);
                        if (c == null) {
                            order.addElement(w);
                            counts.put(w, new Integer(1));
                        } else {
                            counts.put(w, new Integer(c.intValue() + 1));
                        }
                    }
                    start = i + 1;
                }
            }
        }
        int check = 0;
        for (int i = 0; i < order.size(); i++) {
            String w = (String) order.elementAt(i);
            check = check * 17 + ((Integer) counts.get(w)).intValue() * w.length();
        }
        System.out.println(order.size());
        System.out.println(check);
    }
}
