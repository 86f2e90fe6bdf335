package io.rdmabus.spi;

/** A transport's agent as an {@link AgentHost} runs it. */
public interface HostedAgent extends AutoCloseable {
    /** @return true once {@link #close()} ran, or once the host stopped (its thread ended, the bus closed) */
    boolean isClosed();

    /**
     * @return true when the calling thread is the one that runs the agent's duty cycles (no need to hand work over): a
     *     thread of its own or the shared thread, from its start on; in {@code INVOKER} mode, the thread inside a cycle
     *     right now
     */
    boolean onAgentThread();

    /**
     * For a thread that waits until the agent has done something (a command it queued): lets the agent progress for a
     * moment. With its own or the shared thread that means a short pause; in {@code INVOKER} mode, when no other thread
     * is inside the bus's duty cycle, the caller runs one itself, so a wait never depends on the application's loop.
     */
    void idleWhileWaiting();

    /**
     * Stops the agent and returns once its {@code onClose} has run (on the thread that ran it, or on the caller when
     * nothing runs it any more). Idempotent.
     */
    @Override
    void close();
}
