// Uses floating point, which the virtual board does not support.
public class Floaty {
    public static void main(String[] args) {
        float f = args.length + 1.5f;
        System.out.println(f > 1 ? "big" : "small");
    }
}
