package demo;
public class Words {
    public static void main(String[] args) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            b.append(i);
        }
        String s = b.toString();
        int sum = 0;
        for (int i = 0; i < s.length(); i++) {
            sum += s.charAt(i);
        }
        try {
            check(sum);
        } catch (RuntimeException e) {
            sum += e.getMessage().length();
        }
        System.out.println("sum " + sum);
    }
    static void check(int sum) {
        if (sum > 0) {
            throw new RuntimeException("over");
        }
    }
}
