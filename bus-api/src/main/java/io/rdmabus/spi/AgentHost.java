package io.rdmabus.spi;

import org.agrona.concurrent.Agent;

/**
 * Where a transport's agents run, as the bus's {@link io.rdmabus.ThreadingMode} decides: on a thread of their own
 * ({@code DEDICATED}), on the bus's one shared thread beside its delivery agent ({@code SHARED}), or inside the
 * application's {@link io.rdmabus.Bus#doWork()} calls ({@code INVOKER}). Only agents that never block belong here; an
 * agent that waits in a system call (e.g. for rdma_cm events) keeps a dedicated thread.
 */
@FunctionalInterface
public interface AgentHost {
    /**
     * Starts running {@code agent}: its {@code onStart} runs on the thread that will run its duty cycles, before the
     * first one.
     *
     * @param agent a non-blocking agent
     * @return the handle that waits for it and stops it
     */
    HostedAgent host(Agent agent);

    /**
     * @return true if every hosted agent gets a thread of its own ({@code DEDICATED}): a transport may then run its agent
     *     on a thread it starts itself, under an idle strategy of its own (e.g. one that sleeps on a completion channel);
     *     false if agents share the bus's thread or the application's {@code Bus.doWork()} calls, where an agent must
     *     never sleep in a system call
     */
    default boolean dedicatesThreads() {
        return false;
    }
}
