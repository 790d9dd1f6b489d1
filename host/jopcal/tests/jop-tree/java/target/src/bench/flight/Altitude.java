package flight;

/** The state the handlers share. */
public class Altitude {
    int feet = 1000;
}
