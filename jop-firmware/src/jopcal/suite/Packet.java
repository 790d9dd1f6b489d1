package jopcal.suite;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/**
 * A packet stack in miniature: builds IPv4/UDP datagrams in a byte buffer,
 * fills in the RFC 1071 ones'-complement header checksum, then parses them
 * back, verifies the checksum and dispatches on the destination port.
 */
public final class Packet extends Workload {
    private static final int HEADER = 20;
    private static final int UDP = 8;
    private static final int PAYLOAD = 32;
    private static final int PACKETS = 24;
    private byte[] frame;
    private int[] portHits;

    public static void main(String[] args) {
        Harness.runOne(new Packet());
    }

    public String name() {
        return "Packet";
    }

    public int iterations() {
        return 3;
    }

    public void setup() {
        frame = new byte[HEADER + UDP + PAYLOAD];
        portHits = new int[4];
    }

    static void put16(byte[] b, int off, int v) {
        b[off] = (byte) (v >> 8);
        b[off + 1] = (byte) v;
    }

    static int get16(byte[] b, int off) {
        return ((b[off] & 0xff) << 8) | (b[off + 1] & 0xff);
    }

    static int checksum(byte[] b, int off, int len) {
        int sum = 0;
        for (int i = 0; i < len; i += 2) {
            sum += get16(b, off + i);
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return ~sum & 0xffff;
    }

    void build(int seq) {
        byte[] f = frame;
        f[0] = 0x45;
        f[1] = 0;
        put16(f, 2, HEADER + UDP + PAYLOAD);
        put16(f, 4, seq);
        put16(f, 6, 0);
        f[8] = 64;
        f[9] = 17;
        put16(f, 10, 0);
        put16(f, 12, 0xc0a8);
        put16(f, 14, 0x0001 + seq);
        put16(f, 16, 0xc0a8);
        put16(f, 18, 0x0002);
        put16(f, 10, checksum(f, 0, HEADER));
        int ports = 1000 + (seq & 3) * 7;
        put16(f, HEADER, 5000 + seq);
        put16(f, HEADER + 2, ports);
        put16(f, HEADER + 4, UDP + PAYLOAD);
        put16(f, HEADER + 6, 0);
        for (int i = 0; i < PAYLOAD; i++) {
            f[HEADER + UDP + i] = (byte) (seq * 13 + i);
        }
    }

    /** Returns the payload sum of an accepted packet, or -1 when it is rejected. */
    int receive() {
        byte[] f = frame;
        if ((f[0] & 0xf0) != 0x40 || f[9] != 17) {
            return -1;
        }
        if (checksum(f, 0, HEADER) != 0) {
            return -1;
        }
        int port = get16(f, HEADER + 2);
        int slot;
        switch (port) {
            case 1000:
                slot = 0;
                break;
            case 1007:
                slot = 1;
                break;
            case 1014:
                slot = 2;
                break;
            default:
                slot = 3;
                break;
        }
        portHits[slot]++;
        int len = get16(f, HEADER + 4) - UDP;
        int s = 0;
        for (int i = 0; i < len; i++) {
            s += f[HEADER + UDP + i] & 0xff;
        }
        return s;
    }

    public int run(int iterations) {
        int total = 0;
        for (int it = 0; it < iterations; it++) {
            for (int seq = 0; seq < PACKETS; seq++) {
                build(seq);
                total += receive();
                // corrupt one header byte: the checksum must reject it
                frame[8] ^= 1;
                total += receive() == -1 ? 1 : 0;
            }
        }
        return total + portHits[3] * 100000;
    }

    public int expected() {
        int total = 0;
        for (int seq = 0; seq < PACKETS; seq++) {
            for (int i = 0; i < PAYLOAD; i++) {
                total += (seq * 13 + i) & 0xff;
            }
            total += 1;
        }
        // ports 1000, 1007, 1014, 1021: a quarter of the packets land in the default slot
        return total * iterations() + (PACKETS / 4) * iterations() * 100000;
    }
}
