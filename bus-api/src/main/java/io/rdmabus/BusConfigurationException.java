package io.rdmabus;

/** Misconfiguration detected at build/subscribe/publish time; the message says what to change. */
public class BusConfigurationException extends BusException {
    private static final long serialVersionUID = 1L;

    /** @param message what is wrong and what to change */
    public BusConfigurationException(final String message) {
        super(message);
    }
}
