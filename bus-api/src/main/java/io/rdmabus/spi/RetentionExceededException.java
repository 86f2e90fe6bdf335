package io.rdmabus.spi;

import io.rdmabus.TransportException;

/**
 * A RELIABLE stream could not be resumed after a reconnect: the publisher no longer retains the frame the subscriber
 * needs next (its retention window moved past it, or the publishing session is gone). Frames in between are lost, so
 * the transport reports it through {@link SubscriptionSink#onTransportError} and the bus fails the subscriber's
 * {@code Flux} with it instead of delivering a silent gap.
 */
public class RetentionExceededException extends TransportException {
    private static final long serialVersionUID = 1L;

    private final int sessionId;
    private final long nextSequence;
    private final long oldestRetainedSequence;

    /**
     * @param message                what was lost and which setting bounds it
     * @param sessionId              the publisher session whose stream could not be resumed
     * @param nextSequence           the first sequence the subscriber had not received
     * @param oldestRetainedSequence the oldest sequence the publisher still retained, or -1 if the session is gone
     */
    public RetentionExceededException(final String message, final int sessionId, final long nextSequence, final long oldestRetainedSequence) {
        super(message);
        this.sessionId = sessionId;
        this.nextSequence = nextSequence;
        this.oldestRetainedSequence = oldestRetainedSequence;
    }

    /** @return the publisher session whose stream could not be resumed */
    public int sessionId() {
        return sessionId;
    }

    /** @return the first sequence the subscriber had not received */
    public long nextSequence() {
        return nextSequence;
    }

    /** @return the oldest sequence the publisher still retained, or -1 if the publishing session is gone */
    public long oldestRetainedSequence() {
        return oldestRetainedSequence;
    }
}
