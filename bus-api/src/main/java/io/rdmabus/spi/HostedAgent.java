package io.rdmabus.spi;

/** A transport's agent as an {@link AgentHost} runs it. */
public interface HostedAgent extends AutoCloseable {
    /** @return true once {@link #close()} ran, or once the host stopped (its thread ended, the bus closed) */
    boolean isClosed();

    /** @return true when the calling thread is running the agent's duty cycle right now (no need to hand work over) */
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
