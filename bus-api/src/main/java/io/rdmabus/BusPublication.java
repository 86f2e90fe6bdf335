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
     * Offers {@code values[offset]} to {@code values[offset + length - 1]} in order, each as {@link #offer(Object)}
     * would, and stops at the first one the publication does not take. The publication's single-writer ownership is
     * taken once for them all rather than once per value: where a message is handed to another thread on this machine
     * (a subscriber of this bus, a transport whose sending thread reads what the publisher wrote), taking it waits for
     * the previous message's stores, so a burst sent this way costs less per message (docs/benchmarks.md). The
     * messages of one call share one timestamp, the publisher's clock when the first of them is taken. Over rdma, a
     * BEST_EFFORT topic posts the whole burst's datagrams with one verbs call instead of one per message, and a
     * RELIABLE topic posts each subscriber's frames of the burst with one call. A
     * {@link #close()} from another thread stops the call before its next value, as it would refuse the next single
     * offer; the values taken before are sent.
     *
     * @param values the values
     * @param offset the first value's index
     * @param length how many values, from {@code offset}
     * @return how many values were taken (1 to {@code length}; offer the rest again later), or, when the first one was
     *     not, its {@link PublishStatus} code (negative); 0 for {@code length} 0. If a value's codec throws, the
     *     exception ends the call and the values before it were taken.
     * @throws IndexOutOfBoundsException if the range is not within {@code values}
     */
    default int offer(final T[] values, final int offset, final int length) {
        java.util.Objects.checkFromIndexSize(offset, length, values.length);
        for (int i = 0; i < length; i++) {
            final int status = offer(values[offset + i]);
            if (status != PublishStatus.OK) {
                return i == 0 ? status : i;
            }
        }
        return length;
    }

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
