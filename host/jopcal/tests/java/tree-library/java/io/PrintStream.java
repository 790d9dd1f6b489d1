package java.io;
public class PrintStream {
    public void println() {
    }
    public void println(String s) {
    }
    public void println(int i) {
    }
    public void print(char c) {
    }
    public void print(String s) {
    }
}
