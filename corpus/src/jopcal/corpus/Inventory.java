package jopcal.corpus;

import java.util.Hashtable;
import java.util.Vector;
import java.util.Enumeration;

/** A small inventory: items in a Hashtable by name, orders in a Vector, restocking by exception. */
public class Inventory {
    static class OutOfStock extends Exception {
        final String item;
        OutOfStock(String item) { super("out of " + item); this.item = item; }
    }

    static class Item {
        String name; int count; int price;
        Item(String n, int c, int p) { name = n; count = c; price = p; }
    }

    static Hashtable stock = new Hashtable();

    static int take(String name, int n) throws OutOfStock {
        Item it = (Item) stock.get(name);
        if (it == null || it.count < n) throw new OutOfStock(name);
        it.count -= n;
        return n * it.price;
    }

    public static void main(String[] args) {
        String[] names = {"bolt", "nut", "gear", "spring", "cam", "pin", "axle", "belt"};
        for (int i = 0; i < names.length; i++) stock.put(names[i], new Item(names[i], 20 + i * 3, 5 + i));
        Vector orders = new Vector();
        int seed = 12345;
        for (int i = 0; i < 400; i++) {
            seed = seed * 1103515245 + 12345;
            orders.addElement(names[(seed >>> 16) & 7]);
        }
        int revenue = 0, misses = 0, restocks = 0;
        for (int i = 0; i < orders.size(); i++) {
            String n = (String) orders.elementAt(i);
            try {
                revenue += take(n, 1 + (i & 3));
            } catch (OutOfStock e) {
                misses++;
                Item it = (Item) stock.get(e.item);
                it.count += 15;
                restocks++;
            }
        }
        int left = 0;
        for (Enumeration en = stock.elements(); en.hasMoreElements();) left += ((Item) en.nextElement()).count;
        System.out.println("revenue " + revenue + " misses " + misses + " restocks " + restocks + " left " + left);
    }
}
