package flight;

public interface Plane {
    void init();

    void start();
}
