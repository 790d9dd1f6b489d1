package jopcal.corpus;

/** Shapes behind an interface and an abstract class, sorted by area, tested with instanceof and cast back. */
public class ShapeSort {
    interface Shape { int area(); int kind(); }
    static abstract class Base implements Shape {
        final int x;
        Base(int x) { this.x = x; }
        public int kind() { return 0; }
    }
    static class Square extends Base {
        Square(int s) { super(s); }
        public int area() { return x * x; }
    }
    static class Rect extends Base {
        final int h;
        Rect(int w, int h) { super(w); this.h = h; }
        public int area() { return x * h; }
        public int kind() { return 1; }
    }
    static class Tri implements Shape {
        final int b, h;
        Tri(int b, int h) { this.b = b; this.h = h; }
        public int area() { return b * h / 2; }
        public int kind() { return 2; }
    }

    static void sort(Shape[] a) {
        for (int i = 1; i < a.length; i++) {
            Shape k = a[i];
            int ka = k.area();
            int j = i - 1;
            while (j >= 0 && a[j].area() > ka) {
                a[j + 1] = a[j];
                j--;
            }
            a[j + 1] = k;
        }
    }

    public static void main(String[] args) {
        Shape[] all = new Shape[40];
        int sum = 0;
        for (int round = 0; round < 12; round++) {
            for (int i = 0; i < all.length; i++) {
                int v = (i * 7 + round * 3) % 13 + 1;
                switch (i % 3) {
                    case 0: all[i] = new Square(v); break;
                    case 1: all[i] = new Rect(v, v + 2); break;
                    default: all[i] = new Tri(v + 1, v);
                }
            }
            sort(all);
            for (int i = 0; i < all.length; i++) {
                Shape s = all[i];
                if (s instanceof Base) {
                    sum += ((Base) s).x;
                } else if (s instanceof Tri) {
                    sum += ((Tri) s).b * 2;
                }
                sum += s.kind() * i;
            }
        }
        System.out.println("sum " + sum + " first " + all[0].area() + " last " + all[all.length - 1].area());
    }
}
