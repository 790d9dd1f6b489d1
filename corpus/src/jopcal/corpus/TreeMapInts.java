package jopcal.corpus;

/**
 * A binary search tree of objects: insertion, lookup and an in-order walk by recursion.
 * (Few keys: the recursion stays within the processor's 256-word stack.)
 */
public class TreeMapInts {
    static final class Entry {
        int key;
        int count;
        Entry left;
        Entry right;

        Entry(int key) {
            this.key = key;
            this.count = 1;
        }
    }

    static Entry insert(Entry e, int key) {
        if (e == null) {
            return new Entry(key);
        }
        if (key < e.key) {
            e.left = insert(e.left, key);
        } else if (key > e.key) {
            e.right = insert(e.right, key);
        } else {
            e.count++;
        }
        return e;
    }

    static int walk(Entry e, int acc) {
        if (e == null) {
            return acc;
        }
        acc = walk(e.left, acc);
        acc = acc * 7 + e.key * e.count;
        return walk(e.right, acc);
    }

    public static void main(String[] args) {
        Entry root = null;
        int seed = 7;
        for (int i = 0; i < 60; i++) {
            seed = seed * 69069 + 1;
            root = insert(root, (seed >>> 20) & 1023);
        }
        int hits = 0;
        for (int k = 0; k < 1024; k += 3) {
            Entry e = root;
            while (e != null && e.key != k) {
                e = k < e.key ? e.left : e.right;
            }
            if (e != null) {
                hits += e.count;
            }
        }
        System.out.println(hits);
        System.out.println(walk(root, 0));
    }
}
