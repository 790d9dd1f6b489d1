package jopcal.corpus;

/** Records checked field by field; each failure is an exception of its own kind, caught a few frames up. */
public class Validator {
    static class Invalid extends Exception {
        final int field;
        Invalid(String why, int field) { super(why); this.field = field; }
    }
    static class TooLong extends Invalid { TooLong(int f) { super("too long", f); } }
    static class Empty extends Invalid { Empty(int f) { super("empty", f); } }
    static class BadChar extends Invalid {
        final char c;
        BadChar(int f, char c) { super("bad char", f); this.c = c; }
    }

    static void checkField(String s, int field) throws Invalid {
        if (s.length() == 0) throw new Empty(field);
        if (s.length() > 6) throw new TooLong(field);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '#') throw new BadChar(field, c);
        }
    }

    static void checkRecord(String[] fields) throws Invalid {
        for (int f = 0; f < fields.length; f++) {
            checkField(fields[f], f);
        }
    }

    static int[] kinds = new int[4];

    static int validate(String[] fields) {
        try {
            checkRecord(fields);
            kinds[0]++;
            return 0;
        } catch (BadChar e) {
            kinds[3]++;
            return e.c + e.field;
        } catch (Empty e) {
            kinds[1]++;
            return e.field;
        } catch (Invalid e) {
            kinds[2]++;
            return e.getMessage().length();
        }
    }

    public static void main(String[] args) {
        String[] pool = { "abc", "", "toolongvalue", "a#b", "ok", "fine", "x", "#" };
        String[] rec = new String[3];
        int sum = 0;
        for (int i = 0; i < 400; i++) {
            for (int k = 0; k < 3; k++) {
                rec[k] = pool[(i * (k + 3) + k) % pool.length];
            }
            sum += validate(rec);
        }
        System.out.println("sum " + sum + " ok " + kinds[0] + " empty " + kinds[1] + " long " + kinds[2] + " bad " + kinds[3]);
    }
}
