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
    private final OutputStream out;

    public SerialLine(OutputStream out) {
        this.out = out;
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
