package jopcal.corpus;

/** Throws exceptions of its own through two frames and catches them. */
public class Exceptions {
    static final class Rejected extends Exception {
        final int code;

        Rejected(int code) {
            this.code = code;
        }
    }

    static int check(int v) throws Rejected {
        if (v % 7 == 3) {
            throw new Rejected(v);
        }
        return v * 2;
    }

    static int process(int v) throws Rejected {
        return check(v) + check(v + 1);
    }

    public static void main(String[] args) {
        int ok = 0;
        int rejected = 0;
        for (int i = 0; i < 600; i++) {
            try {
                ok += process(i);
            } catch (Rejected r) {
                rejected += r.code;
            } finally {
                ok++;
            }
        }
        System.out.println(ok);
        System.out.println(rejected);
    }
}
