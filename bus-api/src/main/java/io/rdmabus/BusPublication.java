package io.rdmabus;

/**
 * Imperative publishing for one topic with its own publisher session ("OneToOne": use it from one thread at a
 * time). For reactive publishing with backpressure end to end use {@link Bus#publish}.
 *
 * @param <T> value type
 */
public interface BusPublication<T> extends AutoCloseable {
    /**
     * Encodes {@code value} straight into the transport's send buffer and sends it.
     * A reliable message larger than one frame is fragmented; once its first frame is out the value is taken,
     * and later calls (or {@link #flush}) send the rest before any new value.
     *
     * @param value the value
     * @return a {@link PublishStatus} code
     */
    int offer(T value);

    /**
     * Sends what is left of a fragmented message, if any.
     *
     * @return {@link PublishStatus#OK} when nothing is left, else {@link PublishStatus#BACK_PRESSURED} or CLOSED
     */
    int flush();

    /** @return true if at least one subscriber is connected */
    boolean isConnected();

    /** @return this publication's session id, as seen by subscribers in {@link Received#sessionId()} */
    int sessionId();

    /** @return the topic */
    Topic<T> topic();

    /** Sends what is left of a fragmented message (bounded wait), then releases the transport publication. */
    @Override
    void close();
}
