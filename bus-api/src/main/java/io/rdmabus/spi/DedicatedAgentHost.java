package io.rdmabus.spi;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;

/** Runs each hosted agent on a thread of its own ({@link AgentThreads}: Reactor's blocking operators refuse it). */
public final class DedicatedAgentHost implements AgentHost {
    private static final long WAIT_PAUSE_NS = TimeUnit.MICROSECONDS.toNanos(50);
    private final Supplier<IdleStrategy> idleStrategies;
    private final Consumer<Throwable> errorHandler;

    /**
     * @param idleStrategies a fresh idle strategy per agent
     * @param errorHandler   where the agents' errors go
     */
    public DedicatedAgentHost(final Supplier<IdleStrategy> idleStrategies, final Consumer<Throwable> errorHandler) {
        this.idleStrategies = idleStrategies;
        this.errorHandler = errorHandler;
    }

    @Override
    public HostedAgent host(final Agent agent) {
        final AgentRunner runner = new AgentRunner(idleStrategies.get(), errorHandler::accept, null, agent);
        AgentThreads.start(runner);
        return new HostedAgent() {
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
        };
    }
}
