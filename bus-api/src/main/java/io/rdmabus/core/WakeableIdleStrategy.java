package io.rdmabus.core;

import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.IdleStrategy;

/**
 * The idle strategy of the bus's shared thread: the configured one, plus a way for another thread to cut its idling
 * short. A transport that receives on a thread of its own (TCP's event loops, the rdma poller) or a same-bus publisher
 * hands messages to the delivery agent through a ring; when a message lands in an empty ring while the shared thread
 * idles, {@link #wake()} unparks it, so the delivery does not wait for the end of a back-off park (up to 1 ms with the
 * default {@code backoff}). Without it, in a request-reply exchange every idle period pushed the thread further into its
 * back-off, so each reply found it in a longer park: the round trip settled in a fast or a slow mode.
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
