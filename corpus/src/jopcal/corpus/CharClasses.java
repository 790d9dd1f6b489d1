package jopcal.corpus;

/** Classifies and converts characters: Character.isDigit, case conversion, char arithmetic. */
public class CharClasses {
    public static void main(String[] args) {
        String s = "Hello, World! 2026 is the Year of JOP; 42 Cycles per Bytecode? no: 3.";
        int digits = 0, upper = 0, lower = 0, other = 0;
        int mix = 0;
        for (int round = 0; round < 40; round++) {
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (Character.isDigit(c)) {
                    digits++;
                    mix += Character.digit(c, 10);
                } else if (Character.isUpperCase(c)) {
                    upper++;
                    mix += Character.toLowerCase(c);
                } else if (Character.isLowerCase(c)) {
                    lower++;
                    mix ^= Character.toUpperCase(c);
                } else {
                    other++;
                }
            }
        }
        System.out.println(digits + upper * 100 + lower * 10000);
        System.out.println(other + mix);
    }
}
