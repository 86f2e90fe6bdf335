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
    public boolean dedicatesThreads() {
        return true;
    }

    @Override
    public HostedAgent host(final Agent agent) {
        return start(new AgentRunner(idleStrategies.get(), errorHandler::accept, null, agent));
    }

    /**
     * Starts {@code runner} on a thread of its own ({@link AgentThreads}) and returns it as a {@link HostedAgent}: for a
     * transport that runs an agent on its own thread under an idle strategy of its own, seen through the same face as
     * the agents the bus hosts.
     *
     * @param runner the agent under its idle strategy, not started
     * @return the handle: {@link HostedAgent#idleWhileWaiting()} parks briefly, {@link HostedAgent#close()} closes the runner
     */
    public static HostedAgent start(final AgentRunner runner) {
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
