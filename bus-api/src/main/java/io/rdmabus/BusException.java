package io.rdmabus;

/** Base of the bus's typed exceptions. */
public class BusException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what failed and what to do */
    public BusException(final String message) {
        super(message);
    }

    /**
     * @param message what failed and what to do
     * @param cause   the underlying failure
     */
    public BusException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
