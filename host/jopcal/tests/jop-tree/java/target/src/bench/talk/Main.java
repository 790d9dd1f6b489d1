package talk;

/** An application whose work prints: it cannot be timed apart from its output. */
public class Main {
    public static void main(String[] args) {
        Chatter c = new Chatter();
        c.go();
    }
}
