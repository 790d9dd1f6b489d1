package jopcal.corpus;

import java.util.Vector;

/** Sorts boxed integers held in a Vector by insertion sort. */
public class VectorSort {
    public static void main(String[] args) {
        Vector v = new Vector();
        int seed = 12345;
        for (int i = 0; i < 120; i++) {
            seed = seed * 1103515245 + 12345;
            v.addElement(new Integer((seed >>> 8) % 10000));
        }
        for (int i = 1; i < v.size(); i++) {
            Integer key = (Integer) v.elementAt(i);
            int j = i - 1;
            while (j >= 0 && ((Integer) v.elementAt(j)).intValue() > key.intValue()) {
                v.setElementAt(v.elementAt(j), j + 1);
                j--;
            }
            v.setElementAt(key, j + 1);
        }
        int check = 0;
        for (int i = 0; i < v.size(); i++) {
            check = check * 3 + ((Integer) v.elementAt(i)).intValue();
        }
        System.out.println(check);
    }
}
