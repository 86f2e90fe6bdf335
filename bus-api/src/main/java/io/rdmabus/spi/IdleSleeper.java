package io.rdmabus.spi;

/**
 * A hosted agent's way for the host's thread to sleep in the kernel between idle duty cycles (e.g. the rdma poller's
 * completion channel), instead of parking on a timer. A {@code SHARED} bus's shared thread, once its spins and yields
 * find no work, sleeps in it until an event the agent waits for arrives, {@link #wake()} is called, or the bound
 * passes; so an idle bus wakes a few dozen times a second rather than a thousand (a timer park lasts at most 1 ms).
 * Work that reaches the shared thread from other threads (commands, ring hand-offs, subscriber demand) calls the
 * host's wake, which ends the sleep.
 */
public interface IdleSleeper {
    /**
     * Sleeps until the agent has work, {@link #wake()} was called (since the last sleep), or {@code timeoutMs} passed;
     * the host's thread only. May return at once (the agent has work another way, or it handled what arrived while it
     * prepared to sleep).
     *
     * @param timeoutMs the host's bound on the sleep; the agent may sleep less (its own timers)
     * @return work done while preparing to sleep (more than 0: the host counts the cycle as busy), 0 after a sleep, or
     *     {@link #CLOSED} once the sleeper is closed (the host parks as it did before, and never calls it again)
     */
    int sleep(long timeoutMs);

    /** Ends a sleep in progress, or makes the next one return at once (any thread). Nothing once closed. */
    void wake();

    /** From {@link #sleep}: the sleeper is closed. */
    int CLOSED = -1;
}
