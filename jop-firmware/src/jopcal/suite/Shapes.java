package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/**
 * Objects and dispatch: a shape hierarchy with a polymorphic virtual call site
 * (area) and an interface call site (Scalable.scale) over three receiver classes.
 */
public final class Shapes extends Workload {
    interface Scalable {
        void scale(int num, int den);
    }

    abstract static class Shape implements Scalable {
        abstract int area();

        int perimeter() {
            return 0;
        }
    }

    static final class Rect extends Shape {
        int w;
        int h;

        Rect(int w, int h) {
            this.w = w;
            this.h = h;
        }

        int area() {
            return w * h;
        }

        int perimeter() {
            return 2 * (w + h);
        }

        public void scale(int num, int den) {
            w = w * num / den;
            h = h * num / den;
        }
    }

    static final class Square extends Shape {
        int side;

        Square(int side) {
            this.side = side;
        }

        int area() {
            return side * side;
        }

        int perimeter() {
            return 4 * side;
        }

        public void scale(int num, int den) {
            side = side * num / den;
        }
    }

    static final class Triangle extends Shape {
        int base;
        int height;

        Triangle(int base, int height) {
            this.base = base;
            this.height = height;
        }

        int area() {
            return base * height / 2;
        }

        public void scale(int num, int den) {
            base = base * num / den;
            height = height * num / den;
        }
    }

    private static final int COUNT = 30;
    private Shape[] shapes;

    public static void main(String[] args) {
        Harness.runOne(new Shapes());
    }

    public String name() {
        return "Shapes";
    }

    public int iterations() {
        return 20;
    }

    public void setup() {
        shapes = new Shape[COUNT];
    }

    void build() {
        for (int i = 0; i < COUNT; i++) {
            int k = i % 3;
            if (k == 0) {
                shapes[i] = new Rect(i + 2, i + 5);
            } else if (k == 1) {
                shapes[i] = new Square(i + 3);
            } else {
                shapes[i] = new Triangle(i + 4, i + 6);
            }
        }
    }

    int sweep() {
        int total = 0;
        for (int i = 0; i < COUNT; i++) {
            Shape s = shapes[i];
            total += s.area() + s.perimeter();
        }
        for (int i = 0; i < COUNT; i++) {
            Scalable s = shapes[i];
            s.scale(3, 2);
        }
        for (int i = 0; i < COUNT; i++) {
            total += shapes[i].area();
        }
        return total;
    }

    public int run(int iterations) {
        int sum = 0;
        for (int it = 0; it < iterations; it++) {
            build();
            sum += sweep();
        }
        return sum;
    }

    /** Recomputes the same geometry with plain arithmetic, no objects. */
    public int expected() {
        int total = 0;
        for (int i = 0; i < COUNT; i++) {
            int k = i % 3;
            if (k == 0) {
                int w = i + 2;
                int h = i + 5;
                total += w * h + 2 * (w + h);
                total += (w * 3 / 2) * (h * 3 / 2);
            } else if (k == 1) {
                int s = i + 3;
                total += s * s + 4 * s;
                total += (s * 3 / 2) * (s * 3 / 2);
            } else {
                int b = i + 4;
                int h = i + 6;
                total += b * h / 2;
                total += (b * 3 / 2) * (h * 3 / 2) / 2;
            }
        }
        return total * iterations();
    }
}
