package io.rdmabus.spi;

/** The receiving side of one topic on one transport, feeding one {@link SubscriptionSink}. */
public interface TransportSubscription extends AutoCloseable {
    /**
     * Stops delivery and releases the subscription's resources (sockets, receive buffers, QPs). Idempotent.
     * After it returns, the sink is not called again.
     */
    @Override
    void close();
}
