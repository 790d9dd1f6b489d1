package jopcal.limits;

/**
 * Makes a three-dimensional array with one `new`. The host JVM runs it; jop-devel/jop's
 * runtime makes arrays of two dimensions only (its multianewarray routine prints
 * "3dimensions not supported" and stops the program in JVMHelp.noim, which waits
 * forever). jopcal names that stop at once instead of waiting out the time limit.
 */
public class Cube {
    public static void main(String[] args) {
        int[][][] cube = new int[3][4][5];
        int sum = 0;
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 4; j++) {
                for (int k = 0; k < 5; k++) {
                    cube[i][j][k] = i + j * k;
                    sum += cube[i][j][k];
                }
            }
        }
        System.out.println(sum);
    }
}
