// Calls a library method the virtual board does not provide.
public class Library {
    public static void main(String[] args) {
        System.out.println(Math.abs(args.length - 3));
    }
}
