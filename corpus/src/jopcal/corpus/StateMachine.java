package jopcal.corpus;

/** A protocol state machine driven by sparse message codes (lookupswitch) and dense states (tableswitch). */
public class StateMachine {
    static final int IDLE = 0, OPEN = 1, DATA = 2, CLOSING = 3, ERROR = 4;

    static int step(int state, int msg) {
        switch (state) {
        case IDLE:
            switch (msg) {
            case 0x1001: return OPEN;
            case 0x7777: return ERROR;
            default: return IDLE;
            }
        case OPEN:
            switch (msg) {
            case 0x2002: return DATA;
            case 0x3003: return CLOSING;
            case 0x7777: return ERROR;
            default: return OPEN;
            }
        case DATA:
            switch (msg) {
            case 0x2002: return DATA;
            case 0x3003: return CLOSING;
            case 0x9999: return IDLE;
            default: return ERROR;
            }
        case CLOSING:
            return msg == 0x4004 ? IDLE : CLOSING;
        default:
            return IDLE;
        }
    }

    public static void main(String[] args) {
        int[] msgs = { 0x1001, 0x2002, 0x2002, 0x5005, 0x1001, 0x2002, 0x3003, 0x4004, 0x7777, 0x0,
                0x1001, 0x3003, 0x4004, 0x2002, 0x9999 };
        int state = IDLE;
        int[] visits = new int[5];
        for (int round = 0; round < 400; round++) {
            for (int i = 0; i < msgs.length; i++) {
                state = step(state, msgs[(i + round) % msgs.length]);
                visits[state]++;
            }
        }
        System.out.println(visits[0] + visits[1] * 3 + visits[2] * 5 + visits[3] * 7 + visits[4] * 11);
    }
}
