package io.rdmabus.codec;

/** Thrown by {@link Codec#decode} for a truncated or corrupt payload, and by encoders for values they cannot encode. */
public class CodecException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what was wrong, including the offending lengths/values */
    public CodecException(final String message) {
        super(message);
    }

    /**
     * @param message what was wrong
     * @param cause   the underlying failure
     */
    public CodecException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
