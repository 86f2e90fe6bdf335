package io.rdmabus.core;

import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.IdleStrategy;

/**
 * The idle strategy of the thread that runs the bus's delivery agent (the shared thread, or in {@code DEDICATED} mode
 * the delivery agent's own): the configured one, plus a way for another thread to cut its idling short. A transport
 * that receives on a thread of its own (TCP's event loops, the rdma poller) or a same-bus publisher hands messages to
 * the delivery agent through a ring; when a message lands in an empty ring while that thread idles, {@link #wake()}
 * unparks it. Without it, a delivery waits for the idle step in progress to end: with the default {@code backoff} a
 * park asked for 1 us sleeps some 60-70 us on Linux (timer slack), and longer ones up to 1 ms follow, so in a
 * request-reply exchange each hop through a parked delivery thread cost a whole park.
 *
 * <p>Owner: {@link #idle} and {@link #reset} run on the agent's thread; {@link #wake()} on any. A wake that races with
 * the thread going idle can be missed: then the delivery waits for the park to end, as it would without this class.
 */
final class WakeableIdleStrategy implements IdleStrategy {
    private final IdleStrategy delegate;
    /** The agent's thread while it idles, else null. */
    private volatile Thread idler;

    WakeableIdleStrategy(final IdleStrategy delegate) {
        this.delegate = delegate;
    }

    @Override
    public void idle(final int workCount) {
        if (workCount > 0) {
            delegate.idle(workCount); // resets the back-off
            return;
        }
        idle();
    }

    @Override
    public void idle() {
        idler = Thread.currentThread();
        try {
            delegate.idle();
        } finally {
            idler = null;
        }
    }

    @Override
    public void reset() {
        delegate.reset();
    }

    @Override
    public String alias() {
        return delegate.alias();
    }

    /** Ends the agent thread's current idle step early if it is idling (any thread); else nothing. */
    void wake() {
        final Thread thread = idler;
        if (thread != null) {
            LockSupport.unpark(thread);
        }
    }
}
