package io.rdmabus.spi;

import java.util.concurrent.ThreadFactory;

import org.agrona.concurrent.AgentRunner;

import reactor.core.scheduler.NonBlocking;

/**
 * Starts the bus's and the transports' agents (delivery, pollers, receivers, the rdma cm agent) on threads that carry
 * Reactor's {@link NonBlocking} marker. A subscriber callback that runs on such a thread and calls a blocking Reactor
 * operator ({@code block()}, {@code blockFirst()}, {@code toIterable()}...) then fails at once with Reactor's
 * {@code IllegalStateException} ("... are blocking, which is not supported in thread ..."), delivered to that
 * subscriber as an error, instead of stalling the agent and with it every other subscription it serves.
 */
public final class AgentThreads {
    private static final ThreadFactory FACTORY = AgentThread::new;

    private AgentThreads() {
    }

    /**
     * Starts {@code runner} on a new non-blocking thread named after its agent's role.
     *
     * @param runner the agent runner
     * @return the started thread
     */
    public static Thread start(final AgentRunner runner) {
        return AgentRunner.startOnThread(runner, FACTORY);
    }

    /** An agent's thread: Reactor's blocking operators refuse to run on it. */
    private static final class AgentThread extends Thread implements NonBlocking {
        AgentThread(final Runnable runnable) {
            super(runnable);
        }
    }
}
