// A miniature class library in the layout of a JOP tree's jdk_base, written
// for jopcal's tests: the host runs it under shadow names (tests/tree.rs).
package java.lang;
public class Object {
    public Object() {
    }
    public boolean equals(Object other) {
        return this == other;
    }
    public int hashCode() {
        return 7;
    }
    public String toString() {
        return "an object";
    }
}
