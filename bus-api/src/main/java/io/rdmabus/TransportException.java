package io.rdmabus;

/** A control-path failure of a transport (cannot bind, cannot reach a peer, device error). */
public class TransportException extends BusException {
    private static final long serialVersionUID = 1L;

    /** @param message what failed and what to do */
    public TransportException(final String message) {
        super(message);
    }

    /**
     * @param message what failed and what to do
     * @param cause   the underlying failure
     */
    public TransportException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
