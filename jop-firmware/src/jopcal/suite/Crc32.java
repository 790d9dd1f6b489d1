package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/**
 * Table-driven CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320); checked
 * against a bit-by-bit implementation and the standard check value of "123456789".
 */
public final class Crc32 extends Workload {
    private static final int CHECK_123456789 = 0xCBF43926;
    private int[] table;
    private byte[] data;

    public static void main(String[] args) {
        Harness.runOne(new Crc32());
    }

    public String name() {
        return "Crc32";
    }

    public int iterations() {
        return 12;
    }

    public void setup() {
        table = new int[256];
        for (int n = 0; n < 256; n++) {
            int c = n;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ 0xEDB88320 : c >>> 1;
            }
            table[n] = c;
        }
        data = new byte[256];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 7 + 3);
        }
    }

    int crcTable(byte[] buf, int len) {
        int crc = 0xffffffff;
        for (int i = 0; i < len; i++) {
            crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >>> 8);
        }
        return ~crc;
    }

    static int crcBitwise(byte[] buf, int len) {
        int crc = 0xffffffff;
        for (int i = 0; i < len; i++) {
            crc ^= buf[i] & 0xff;
            for (int k = 0; k < 8; k++) {
                crc = (crc >>> 1) ^ (0xEDB88320 & -(crc & 1));
            }
        }
        return ~crc;
    }

    public int run(int iterations) {
        int acc = 0;
        for (int it = 0; it < iterations; it++) {
            data[it] ^= (byte) it;
            acc = acc * 31 + crcTable(data, data.length);
        }
        return acc;
    }

    public int expected() {
        byte[] digits = new byte[9];
        for (int i = 0; i < 9; i++) {
            digits[i] = (byte) ('1' + i);
        }
        if (crcBitwise(digits, 9) != CHECK_123456789) {
            return 0; // the reference itself is broken: make the check fail
        }
        // run() modified data in place; rebuild the original and replay it bitwise.
        byte[] d = new byte[256];
        for (int i = 0; i < d.length; i++) {
            d[i] = (byte) (i * 7 + 3);
        }
        int acc = 0;
        for (int it = 0; it < iterations(); it++) {
            d[it] ^= (byte) it;
            acc = acc * 31 + crcBitwise(d, d.length);
        }
        return acc;
    }
}
