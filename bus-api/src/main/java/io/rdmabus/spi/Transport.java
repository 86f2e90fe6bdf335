package io.rdmabus.spi;

/**
 * A way to move frames between buses: RDMA verbs, Aeron, TCP. One instance belongs to one bus, which starts
 * it, adds publications and subscriptions on the control path, and closes it.
 *
 * <p>Control-path methods throw {@link io.rdmabus.TransportException} (or a subtype) with a message that
 * says what to change; the data path ({@link TransportPublication#tryClaim}, {@link SubscriptionSink#onFrame})
 * uses status codes. A transport runs its own hot loops as agents under a configurable idle strategy and
 * must stop all of its threads in {@link #close()}.
 */
public interface Transport extends AutoCloseable {
    /** @return a short name for logs, e.g. {@code "aeron-udp"} */
    String name();

    /** @return frame sizes and fan-out abilities */
    TransportCapabilities capabilities();

    /**
     * Starts the transport's agents and resources. Called once, before any publication or subscription.
     *
     * @param context the owning bus's settings
     */
    void start(TransportContext context);

    /**
     * @param topic the topic
     * @return a new publication for the topic
     */
    TransportPublication addPublication(TopicDescriptor topic);

    /**
     * A publication whose frames will all carry bus session {@code sessionId} (the bus picks it before it asks): a
     * transport that keeps per-session state for its subscribers (e.g. where a RELIABLE stream resumes after a reconnect)
     * can announce the session before the first frame. The default ignores the session.
     *
     * @param topic     the topic
     * @param sessionId the session id every frame of this publication carries in its header (never 0)
     * @return a new publication for the topic
     */
    default TransportPublication addPublication(final TopicDescriptor topic, final int sessionId) {
        return addPublication(topic);
    }

    /**
     * @param topic the topic
     * @param sink  where frames go
     * @return a new subscription
     */
    TransportSubscription addSubscription(TopicDescriptor topic, SubscriptionSink sink);

    /**
     * The transport's own counters, for {@link io.rdmabus.BusStats#transportCounters()}: what it dropped or refused
     * below the bus (malformed datagrams, frames for no subscriber, refused peers, ...), by a name the transport's
     * documentation explains. Monotonic since {@link #start}; read from any thread; cheap (a snapshot of volatile
     * counters, not a query of the device).
     *
     * @return counter name to value; empty if the transport keeps none
     */
    default java.util.Map<String, Long> counters() {
        return java.util.Map.of();
    }

    /**
     * The transport's live connections to peers and their counters, for {@link io.rdmabus.BusStats#connections()} and the
     * bus's counters file (which shows a connection while it is listed and frees its counters once it is not). Each
     * connection keeps its id for its life; a reconnect is a new connection with a new id. Read from any thread; cheap
     * (a snapshot of the connections' counters), called every 100 ms by the counters file's copy thread.
     *
     * @return one entry per live connection; empty if the transport has no connections of its own
     */
    default java.util.List<io.rdmabus.ConnectionStats> connections() {
        return java.util.List.of();
    }

    /** Closes every publication and subscription, stops all threads, releases sockets/drivers/devices. Idempotent. */
    @Override
    void close();
}
