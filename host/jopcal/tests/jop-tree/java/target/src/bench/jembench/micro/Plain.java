package jembench.micro;

/** Not a benchmark JemBench can run: it extends none of its benchmark classes. */
public class Plain {
    public int twice(int x) {
        return x + x;
    }
}
