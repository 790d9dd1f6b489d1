package jopcal.corpus;

/** Exceptions of its own: a hierarchy, finally blocks, rethrow, catch by superclass, deep throws. */
public class ErrorLevels {
    static class AppError extends Exception {
        final int code;
        AppError(int code) { this.code = code; }
    }
    static class ParseError extends AppError { ParseError(int c) { super(c); } }
    static class RangeError extends AppError { RangeError(int c) { super(c); } }

    static int finals;

    static int parse(int v) throws AppError {
        if (v % 7 == 0) throw new ParseError(v);
        if (v % 11 == 0) throw new RangeError(v);
        return v * 2;
    }

    static int level(int v, int depth) throws AppError {
        try {
            if (depth == 0) return parse(v);
            return level(v + 1, depth - 1) + 1;
        } finally {
            finals++;
        }
    }

    static int guarded(int v) {
        try {
            return level(v, v & 3);
        } catch (ParseError e) {
            return -e.code;
        } catch (AppError e) {
            return e.code * 3;
        }
    }

    public static void main(String[] args) {
        int sum = 0, npe = 0, div = 0;
        int[] small = new int[3];
        for (int i = 0; i < 500; i++) {
            sum += guarded(i);
            try {
                try {
                    if ((i & 15) == 3) throw new IllegalStateException();
                    // Thrown by the program: the processor's own exceptions end
                    // a program on this tree (corpus/limits/ProcessorFaults).
                    if ((i & 3) == 3) throw new ArrayIndexOutOfBoundsException(i & 3);
                    sum += small[i & 3];
                } catch (IllegalStateException e) {
                    sum += 100;
                    throw new RuntimeException("again");
                }
            } catch (ArrayIndexOutOfBoundsException e) {
                npe++;
            } catch (RuntimeException e) {
                div++;
            }
        }
        System.out.println("sum " + sum + " finals " + finals + " oob " + npe + " re " + div);
    }
}
