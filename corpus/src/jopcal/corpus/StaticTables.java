package jopcal.corpus;

/** Lookup tables built by static initialisers, used by the main work: a CRC-16 and a gamma curve. */
public class StaticTables {
    static final int[] CRC = new int[256];
    static final byte[] GAMMA = new byte[64];

    static {
        for (int i = 0; i < 256; i++) {
            int c = i << 8;
            for (int k = 0; k < 8; k++) {
                c = (c & 0x8000) != 0 ? (c << 1) ^ 0x1021 : c << 1;
            }
            CRC[i] = c & 0xffff;
        }
        for (int i = 0; i < 64; i++) {
            GAMMA[i] = (byte) ((i * i) >> 4);
        }
    }

    public static void main(String[] args) {
        int crc = 0xffff;
        for (int i = 0; i < 1200; i++) {
            int b = GAMMA[i & 63] ^ (i >> 3);
            crc = ((crc << 8) ^ CRC[((crc >> 8) ^ b) & 0xff]) & 0xffff;
        }
        System.out.println(crc);
    }
}
