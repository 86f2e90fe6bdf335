package io.rdmabus;

/** A message is larger than its topic allows (or, for best-effort, than one transport frame). */
public class MessageTooLargeException extends BusException {
    private static final long serialVersionUID = 1L;

    /** @param message sizes and the limit that was exceeded */
    public MessageTooLargeException(final String message) {
        super(message);
    }
}
