package io.rdmabus.rdma.transport;

import io.rdmabus.spi.AgentThreads;
import io.rdmabus.spi.HostedAgent;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.AgentRunner;

/**
 * The poller on a thread of its own ({@code rdma-bus-rdma-poller-<bus>}), idling under {@link PollerIdleStrategy} (it
 * sleeps on the CQ's completion channel when idle): how a {@code DEDICATED} bus runs it. Seen through the same
 * {@link HostedAgent} face as a poller the bus hosts, so the transport's waits do not depend on where it runs.
 */
final class PollerThread implements HostedAgent {
    /** A waiter's pause: the poller runs on its own thread, so waiting only lets it. */
    private static final long WAIT_PAUSE_NS = TimeUnit.MICROSECONDS.toNanos(50);
    private final AgentRunner runner;

    /**
     * Starts the runner's thread.
     *
     * @param runner the poller under its idle strategy
     */
    PollerThread(final AgentRunner runner) {
        this.runner = runner;
        AgentThreads.start(runner);
    }

    @Override
    public boolean isClosed() {
        return runner.isClosed();
    }

    @Override
    public boolean onAgentThread() {
        return Thread.currentThread() == runner.thread();
    }

    @Override
    public void idleWhileWaiting() {
        LockSupport.parkNanos(WAIT_PAUSE_NS);
    }

    @Override
    public void close() {
        runner.close();
    }
}
