package jopcal.corpus;

/** Rows of objects: a sparse matrix as arrays of row objects, sorted and swapped. */
public class RowSort {
    static class Row {
        int index; int[] vals;
        Row(int i, int n) { index = i; vals = new int[n]; }
        int sum() { int s = 0; for (int k = 0; k < vals.length; k++) s += vals[k]; return s; }
    }

    public static void main(String[] args) {
        Row[] rows = new Row[40];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = new Row(i, 8);
            for (int k = 0; k < 8; k++) rows[i].vals[k] = ((i * 31 + k * 17) % 23) - 11;
        }
        // selection sort of the rows by their sums: object swaps
        for (int i = 0; i < rows.length; i++) {
            int best = i;
            for (int j = i + 1; j < rows.length; j++) if (rows[j].sum() < rows[best].sum()) best = j;
            Row t = rows[i]; rows[i] = rows[best]; rows[best] = t;
        }
        Row[] copy = new Row[rows.length];
        for (int r = 0; r < 5; r++) {
            for (int i = 0; i < rows.length; i++) copy[(i + r) % rows.length] = rows[i];
            Row[] t = rows; rows = copy; copy = t;
        }
        StringBuffer sb = new StringBuffer();
        for (int i = 0; i < 6; i++) sb.append(rows[i].index).append(',');
        System.out.println(sb.toString() + " " + rows[0].sum());
    }
}
