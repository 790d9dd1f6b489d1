package jopcal.host;

import java.io.IOException;
import java.io.OutputStream;

/**
 * jopcal's host stand-in for JOP's serial line (see SerialMain): every byte
 * a program prints passes through write(int) once, which the profile counts
 * as the characters JOP's UART sends one by one (jopcal_timing's estimate
 * prices each at the line's frame time). Unbuffered, as the UART is.
 */
public final class SerialLine extends OutputStream {
    /** The line the launcher made, for put. */
    private static SerialLine line;
    private final OutputStream out;

    public SerialLine(OutputStream out) {
        this.out = out;
        line = this;
    }

    /**
     * One character the JOP runtime's own output (JVMHelp.wr, where the
     * host runs the tree's System.out) sends, through write(int) as every
     * other.
     */
    public static void put(int c) {
        try {
            line.write(c);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public void write(int b) throws IOException {
        out.write(b);
    }

    public void write(byte[] b, int off, int len) throws IOException {
        for (int i = 0; i < len; i++) {
            write(b[off + i]);
        }
    }

    public void flush() throws IOException {
        out.flush();
    }
}
