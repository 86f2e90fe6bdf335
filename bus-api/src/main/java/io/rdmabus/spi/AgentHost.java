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

    /**
     * Offers the host's thread a way to sleep between idle duty cycles ({@code SHARED}: the shared thread sleeps in it
     * once its idle strategy would park). At most one per host; an agent that offers one withdraws it by closing it
     * ({@link IdleSleeper#sleep} returns {@link IdleSleeper#CLOSED}) before the resources it sleeps on go.
     *
     * @param sleeper the hosted agent's sleeper
     * @return the host's wake, for the agent's command producers (any thread; reads one field unless the host's thread
     *     is about to sleep or sleeping); null if the host does not sleep in it ({@code DEDICATED}, where the agent has a
     *     thread of its own, {@code INVOKER}, where the application's thread idles, a spinning idle strategy, or a host
     *     that already has a sleeper)
     */
    default Runnable idleIn(final IdleSleeper sleeper) {
        return null;
    }
}
