package talk;

public class Chatter {
    public void go() {
        for (int i = 0; i < 3; ++i) {
            System.out.println(i);
        }
    }
}
