package jopcal.corpus;

/** Checksums byte buffers (Adler-32) and prints them in hexadecimal, as a monitor program would. */
public class HexDump {
    public static void main(String[] args) {
        byte[] buf = new byte[256];
        for (int i = 0; i < buf.length; i++) {
            buf[i] = (byte) (i * 73 + 11);
        }
        for (int block = 0; block < 6; block++) {
            int a = 1, b = 0;
            for (int i = 0; i < buf.length; i++) {
                a = (a + (buf[i] & 0xff)) % 65521;
                b = (b + a) % 65521;
                buf[i] ^= (byte) block;
            }
            System.out.print("block ");
            System.out.print(block);
            System.out.print(": ");
            System.out.println(Integer.toHexString((b << 16) | a));
        }
    }
}
