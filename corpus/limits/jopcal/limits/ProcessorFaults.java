package jopcal.limits;

/**
 * Catches the exception the processor raises itself for an array index out of bounds.
 * On jop-devel/jop this program stops instead: the processor's own exceptions arrive in
 * JVMHelp.monitorState, which throws IllegalMonitorStateException, uncaught. jopcal names
 * that stop (the methods from the image's link map) instead of printing the raw dump.
 */
public class ProcessorFaults {
    static int[] table = new int[10];

    public static void main(String[] args) {
        int bounds = 0;
        for (int i = 0; i < 20; i++) {
            try {
                table[i % 13] += i;
            } catch (ArrayIndexOutOfBoundsException e) {
                bounds++;
            }
        }
        System.out.println(bounds);
    }
}
