package io.rdmabus.rdma.transport;

import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * Commands to the rdma transport's cm agent (rdma_cm accept, dial and teardown), the only thread that runs them
 * ({@link #drain}).
 *
 * <p>Callers: the poller thread ({@link #destroy} of a connection it has let go of), application threads through
 * {@link RdmaTransport} ({@link #onSubscribed} when a topic gets its first local subscriber) and test threads
 * ({@link #run}: {@code RdmaTestSeams} breaks connections). The cm agent takes at most {@link #COMMAND_LIMIT} commands per
 * duty cycle, so accepts, dials and adverts keep their turn.
 *
 * <p>Never drops a command silently and never blocks its caller: see {@link CommandQueue} (a bounded queue, then a
 * counted overflow; the poller offers here while the cm agent offers to {@link PollerProxy}, so neither may wait for
 * room). {@link #proxyFails()} counts the commands that did not fit the bounded queue; {@link #discarded()} those
 * dropped because the cm agent had stopped for good (the transport closed: it then destroys every connection itself).
 */
final class CmAgentProxy extends CommandQueue {
    /** Commands the bounded queue holds before the overflow takes them. */
    static final int CAPACITY = 1024;
    /** Commands the cm agent runs per duty cycle at most. */
    static final int COMMAND_LIMIT = 16;

    private final Consumer<Connection> destroy;
    private final IntConsumer onSubscribed;

    /**
     * @param name         for the log
     * @param destroy      disconnects and frees a connection the poller has let go of, run on the cm agent
     * @param onSubscribed dials the known advertisers of a topic that got its first local subscriber, run on the cm agent
     */
    CmAgentProxy(final String name, final Consumer<Connection> destroy, final IntConsumer onSubscribed) {
        this(name, CAPACITY, destroy, onSubscribed);
    }

    CmAgentProxy(final String name, final int capacity, final Consumer<Connection> destroy, final IntConsumer onSubscribed) {
        super(name, capacity);
        this.destroy = destroy;
        this.onSubscribed = onSubscribed;
    }

    /** The cm agent disconnects and frees {@code c} (poller thread). */
    void destroy(final Connection c) {
        offer(() -> destroy.accept(c));
    }

    /** The cm agent dials the advertisers of {@code topicId} it knows (any thread). */
    void onSubscribed(final int topicId) {
        offer(() -> onSubscribed.accept(topicId));
    }

    /** The cm agent runs {@code command} (any thread). */
    void run(final Runnable command) {
        offer(command);
    }

    /**
     * Runs up to {@link #COMMAND_LIMIT} commands through {@code handler} (cm agent thread only), which runs each (the cm
     * agent times each one as a step).
     *
     * @return commands run
     */
    int drain(final Consumer<Runnable> handler) {
        return drain(handler, COMMAND_LIMIT);
    }
}
