package java.lang;
public class Throwable extends Object {
    private String message;
    public String getMessage() {
        return message;
    }
    public Throwable() {
    }
    public Throwable(String message) {
        this.message = message;
    }
}
