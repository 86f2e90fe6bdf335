package io.rdmabus;

/**
 * What happens to a best-effort subscription whose subscriber requests less than arrives. Reliable topics
 * always use {@link #BACKPRESSURE}: a slow reliable subscriber slows its publisher and loses nothing.
 * Every message not delivered is counted in {@link SubscriptionStats#droppedBySubscriber()} and reported in the
 * next {@link Received#lostBefore()}.
 */
public enum SlowConsumerPolicy {
    /** Stop taking frames; the ring fills and further datagrams are dropped at the ring (counted). */
    BACKPRESSURE,
    /** Keep the newest {@code bufferSize} messages; drop the oldest. */
    DROP_OLDEST,
    /** Keep only the latest message per conflation key (e.g. per instrument); older ones are replaced. */
    CONFLATE_LATEST
}
