package io.rdmabus.rdma.transport;

import io.rdmabus.TransportException;
import io.rdmabus.spi.HostedAgent;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Commands to the rdma transport's poller agent, the only thread that runs them ({@link #drain}).
 *
 * <p>Callers: the cm agent thread ({@link #addConnection}, {@link #fail} of a connection it saw disconnect or replaced),
 * publisher threads ({@link #fail} of a connection a send failed on), application threads through
 * {@link RdmaTransport} ({@link #run}: adding and removing local subscriptions, the goodbye at close) and test threads
 * ({@link #run}, {@code RdmaTestSeams}). The poller takes at most {@link #COMMAND_LIMIT} commands per duty cycle, so a burst of
 * commands cannot starve completion polling.
 *
 * <p>Never drops a command silently and never blocks its caller: see {@link CommandQueue} (a bounded queue, then a
 * counted overflow; the cm agent offers here while the poller offers to {@link CmAgentProxy}, so neither may wait for
 * room). {@link #proxyFails()} counts the commands that did not fit the bounded queue; {@link #discarded()} those
 * dropped because the poller had stopped for good (the transport closed).
 */
final class PollerProxy extends CommandQueue {
    /** Commands the bounded queue holds before the overflow takes them. */
    static final int CAPACITY = 1024;
    /** Commands the poller runs per duty cycle at most. */
    static final int COMMAND_LIMIT = 32;
    private static final Consumer<Runnable> RUN = Runnable::run;
    /** States of a {@link #runAndWait} command: queued, begun by the poller, finished, withdrawn by its waiter. */
    private static final int QUEUED = 0;
    private static final int RUNNING = 1;
    private static final int DONE = 2;
    private static final int WITHDRAWN = 3;

    private final Consumer<Connection> fail;
    private final Consumer<Connection> addConnection;

    /**
     * @param name          for the log
     * @param fail          the poller's "tear this connection down" (no cause), run on the poller
     * @param addConnection the poller's "start serving this established connection", run on the poller
     */
    PollerProxy(final String name, final Consumer<Connection> fail, final Consumer<Connection> addConnection) {
        this(name, CAPACITY, fail, addConnection);
    }

    PollerProxy(final String name, final int capacity, final Consumer<Connection> fail, final Consumer<Connection> addConnection) {
        super(name, capacity);
        this.fail = fail;
        this.addConnection = addConnection;
    }

    /** The poller tears {@code c} down (any thread). */
    void fail(final Connection c) {
        offer(() -> fail.accept(c));
    }

    /** The poller starts serving the established connection {@code c} (cm thread). */
    void addConnection(final Connection c) {
        offer(() -> addConnection.accept(c));
    }

    /** The poller runs {@code command} (any thread). */
    void run(final Runnable command) {
        offer(command);
    }

    /**
     * Runs {@code command} on the poller and returns once it ran, so the caller sees its effect (any thread). On the
     * poller's own thread ({@code host.onAgentThread()}: a sink or subscriber calling in from a duty cycle; with a hosted
     * poller, any agent of the bus's shared cycle) it runs at once. Otherwise it is queued and the caller waits through
     * {@link HostedAgent#idleWhileWaiting()}: in {@code INVOKER} mode, with no other thread inside the bus's duty cycle,
     * that runs the cycle on the caller, so the wait never depends on the application's loop. A poller that is or
     * becomes closed ends the wait (its queued commands are discarded and counted at the transport's close).
     *
     * <p>A wait that reaches {@code timeoutMs} withdraws the command if the poller has not begun it, so a caller told
     * "failed" never finds it done later; one the poller has begun is waited for to its end (it is short).
     *
     * @param host      where the poller runs
     * @param command   the command
     * @param timeoutMs bound on the wait ({@code rdma.command.timeout.ms})
     * @throws TransportException if the running poller did not begin it within {@code timeoutMs} (it is withdrawn and
     *                            never runs), or the caller was interrupted (likewise)
     */
    void runAndWait(final HostedAgent host, final Runnable command, final long timeoutMs) {
        if (host.isClosed()) {
            return;
        }
        if (host.onAgentThread()) {
            command.run();
            return;
        }
        final AtomicInteger state = new AtomicInteger(QUEUED);
        offer(() -> {
            if (state.compareAndSet(QUEUED, RUNNING)) {
                try {
                    command.run();
                } finally {
                    state.set(DONE);
                }
            }
        });
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (state.get() != DONE && !host.isClosed()) {
            if (Thread.currentThread().isInterrupted() && state.compareAndSet(QUEUED, WITHDRAWN)) {
                throw new TransportException("interrupted while waiting for the rdma poller to run a command (withdrawn)");
            }
            if (System.nanoTime() - deadline > 0 && state.compareAndSet(QUEUED, WITHDRAWN)) {
                throw new TransportException("the rdma poller did not run a command within " + timeoutMs
                    + " ms (rdma.command.timeout.ms); the command was withdrawn");
            }
            host.idleWhileWaiting();
        }
    }

    /**
     * Runs up to {@link #COMMAND_LIMIT} commands (poller thread only).
     *
     * @return commands run
     */
    int drain() {
        return drain(RUN, COMMAND_LIMIT);
    }
}
