package io.rdmabus.spi;

/**
 * The sending side of one topic on one transport. Single-writer ("OneToOne"): the bus calls
 * {@link #tryClaim} from one thread at a time. Frames go to every subscriber of the topic the transport
 * reaches (fan-out is the transport's job: multicast, unicast per subscriber, or a shared log).
 */
public interface TransportPublication extends AutoCloseable {
    /**
     * Claims room for a frame of {@code frameLength} bytes (frame header included). On {@link TransportStatus#OK}
     * the region is described by {@link #claim()} until it is committed or aborted.
     *
     * @param frameLength bytes to claim, at most {@link #maxFrameLength()}
     * @return {@link TransportStatus#OK} or a negative {@link TransportStatus} code; never throws on the data path
     */
    int tryClaim(int frameLength);

    /** @return the reusable claim filled by the last successful {@link #tryClaim} */
    FrameClaim claim();

    /**
     * The bus is about to claim and commit several frames in a row on this thread ({@code BusPublication}'s batch
     * offer). Until {@link #endBatch()} the transport may hold committed frames and send them together (one verbs
     * post for the batch); a claim that needs what the held frames hold sends them first. Default: nothing changes,
     * each commit sends its frame.
     */
    default void beginBatch() {
    }

    /** Ends {@link #beginBatch()}: every frame committed since is sent (handed to the device or the peers) now. */
    default void endBatch() {
    }

    /** @return the largest frame (header + payload) this publication carries in one piece */
    int maxFrameLength();

    /** @return {@code true} if at least one subscriber is connected (reliable topics wait for one) */
    boolean isConnected();

    /** Releases the publication. Idempotent. */
    @Override
    void close();
}
