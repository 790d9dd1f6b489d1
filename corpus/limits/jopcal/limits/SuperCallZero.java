package jopcal.limits;

/**
 * Calls an overridden method's super version with a first argument of 0. The host JVM
 * runs it to its end. On jop-devel/jop the processor's invokesuper tests the word above
 * the object reference (here the argument) for null, so the call raises a
 * NullPointerException, which this tree's runtime turns into an uncaught
 * IllegalMonitorStateException (see ProcessorFaults). jopcal names that stop.
 */
public class SuperCallZero {
    static class Base {
        int scale(int k) {
            return k + 1;
        }
    }

    static class Twice extends Base {
        int scale(int k) {
            return super.scale(k) * 2;
        }
    }

    public static void main(String[] args) {
        Base b = new Twice();
        int sum = 0;
        for (int k = 3; k >= 0; k--) {
            sum += b.scale(k);
        }
        System.out.println(sum);
    }
}
