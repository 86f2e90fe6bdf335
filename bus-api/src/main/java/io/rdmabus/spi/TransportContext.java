package io.rdmabus.spi;

import java.util.function.Consumer;
import java.util.function.Supplier;

import org.agrona.concurrent.IdleStrategy;

/**
 * What the bus hands a transport at start.
 *
 * @param busName       the bus's name, for thread names and logs
 * @param idleStrategy  makes a fresh idle strategy for each of the transport's agents
 * @param errorHandler  where agents report unexpected errors (logged and counted by the bus)
 * @param discovery     where to advertise and find publishers of topics
 * @param agentHost     where the transport's non-blocking agents run (the bus's threading mode)
 */
public record TransportContext(String busName, Supplier<IdleStrategy> idleStrategy, Consumer<Throwable> errorHandler,
                               Discovery discovery, AgentHost agentHost) {
    /** A context whose agents each get a thread of their own ({@code DEDICATED}). */
    public TransportContext(final String busName, final Supplier<IdleStrategy> idleStrategy, final Consumer<Throwable> errorHandler,
                            final Discovery discovery) {
        this(busName, idleStrategy, errorHandler, discovery, new DedicatedAgentHost(idleStrategy, errorHandler));
    }
}
