package jopcal.corpus;

/** Interface and virtual calls, instanceof and checkcast over a mixed array of shapes. */
public class Shapes {
    interface Shape {
        int area();
    }

    static abstract class Base implements Shape {
        int perimeter() {
            return 0;
        }
    }

    static final class Rect extends Base {
        final int w, h;

        Rect(int w, int h) {
            this.w = w;
            this.h = h;
        }

        public int area() {
            return w * h;
        }

        int perimeter() {
            return 2 * (w + h);
        }
    }

    static final class Square extends Base {
        final int s;

        Square(int s) {
            this.s = s;
        }

        public int area() {
            return s * s;
        }

        int perimeter() {
            return 4 * s;
        }
    }

    static final class Tri implements Shape {
        final int b, h;

        Tri(int b, int h) {
            this.b = b;
            this.h = h;
        }

        public int area() {
            return b * h / 2;
        }
    }

    public static void main(String[] args) {
        Shape[] shapes = new Shape[30];
        for (int i = 0; i < shapes.length; i++) {
            switch (i % 3) {
            case 0: shapes[i] = new Rect(i + 1, i + 2); break;
            case 1: shapes[i] = new Square(i); break;
            default: shapes[i] = new Tri(i, 3); break;
            }
        }
        int area = 0;
        int perim = 0;
        int tris = 0;
        for (int round = 0; round < 100; round++) {
            for (int i = 0; i < shapes.length; i++) {
                Shape s = shapes[i];
                area += s.area();
                if (s instanceof Base) {
                    perim += ((Base) s).perimeter();
                } else if (s instanceof Tri) {
                    tris += ((Tri) s).b;
                }
            }
        }
        System.out.println(area);
        System.out.println(perim + tris);
    }
}
