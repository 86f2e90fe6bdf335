package io.rdmabus.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.IdleStrategies;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

/**
 * The idle strategy of the thread that runs the bus's delivery agent (the shared thread, or in {@code DEDICATED} mode
 * the delivery agent's own): the configured one, plus a way for another thread to cut a park short. A transport
 * that receives on a thread of its own (TCP's event loops, the rdma poller) or a same-bus publisher hands messages to
 * the delivery agent through a ring; when a message lands while that thread is in its parking phase, {@link #wake()}
 * unparks it. Without it, a delivery waits for the park in progress to end: with the default {@code backoff} a
 * park asked for 1 us sleeps some 60-70 us on Linux (timer slack), and longer ones up to 1 ms follow, so in a
 * request-reply exchange each hop through a parked delivery thread cost a whole park.
 *
 * <p>The agent's thread announces itself in {@link #idler} only once it is about to park: after
 * {@link #emptyIdlesBeforePark} empty duty cycles in a row (those of {@code backoff}'s spins and yields; none for a
 * strategy that parks at once; never for one that never parks), and withdraws it when it finds work again. So while it
 * spins, yields or works, the field is not written, and a producer's {@link #wake()} on every message reads a cache
 * line that stays in its own cache. (A field written around every idle step, or a read of the ring's consumer
 * sequence on every message to find the first one after the ring ran empty, would move a cache line between the CPUs
 * with each message whenever the delivering thread keeps up, and so idles between messages.)
 *
 * <p>Owner: {@link #idle}, {@link #reset} and the plain fields belong to the agent's thread; {@link #wake()} runs on
 * any. A waker takes the thread out of {@link #idler} before it unparks it, so of the messages that land during one
 * park only the first pays for the unpark; the agent puts itself back before its next park. A wake that races with
 * the thread announcing itself can be missed: then the delivery waits for that park to end (at most the strategy's
 * longest park), as it would without this class.
 */
final class WakeableIdleStrategy implements IdleStrategy {
    /** From {@link #emptyIdlesBeforePark}: the strategy never parks, so there is never anything to wake. */
    static final int NEVER = Integer.MAX_VALUE;

    private static final VarHandle IDLER;

    static {
        try {
            IDLER = MethodHandles.lookup().findVarHandle(WakeableIdleStrategy.class, "idler", Thread.class);
        } catch (final ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final IdleStrategy delegate;
    /** Empty duty cycles in a row after which the delegate may park, or {@link #NEVER}. */
    private final int idlesBeforePark;
    /** Empty duty cycles in a row so far, up to {@link #idlesBeforePark}. */
    private int emptyIdles;
    /** True from the first idle step of the parking phase until work is found again. */
    private boolean parking;
    /** The agent's thread while it is in its parking phase and no waker has taken it yet, else null. */
    private volatile Thread idler;

    WakeableIdleStrategy(final IdleStrategy delegate) {
        this(delegate, emptyIdlesBeforePark(delegate));
    }

    /**
     * @param delegate        the configured strategy
     * @param idlesBeforePark empty duty cycles in a row after which {@code delegate} may park, or {@link #NEVER}
     */
    WakeableIdleStrategy(final IdleStrategy delegate, final int idlesBeforePark) {
        this.delegate = delegate;
        this.idlesBeforePark = idlesBeforePark;
    }

    /**
     * @return how many empty duty cycles in a row {@code strategy} goes through before it may park: {@link #NEVER} for
     *     the spinning and yielding ones, the spins and yields of the bus's {@code backoff} ({@link IdleStrategies}),
     *     and 0 (it may park at once) for any other
     */
    static int emptyIdlesBeforePark(final IdleStrategy strategy) {
        if (IdleStrategies.neverParks(strategy)) {
            return NEVER;
        }
        if (strategy instanceof BackoffIdleStrategy) {
            // its first park comes two idle steps after these: the announcement precedes it
            return IdleStrategies.BACKOFF_MAX_SPINS + IdleStrategies.BACKOFF_MAX_YIELDS;
        }
        return 0;
    }

    @Override
    public void idle(final int workCount) {
        if (workCount > 0) {
            resume();
            delegate.idle(workCount); // resets the back-off
            return;
        }
        idle();
    }

    @Override
    public void idle() {
        if (!parking) {
            if (emptyIdles < idlesBeforePark) {
                emptyIdles++;
                delegate.idle();
                return;
            }
            if (idlesBeforePark == NEVER) {
                delegate.idle();
                return;
            }
            parking = true;
        }
        if (idler == null) { // the first park of this idle spell, or a waker took it during the last one
            idler = Thread.currentThread();
        }
        delegate.idle();
    }

    @Override
    public void reset() {
        resume();
        delegate.reset();
    }

    private void resume() {
        emptyIdles = 0;
        if (parking) {
            parking = false;
            idler = null;
        }
    }

    @Override
    public String alias() {
        return delegate.alias();
    }

    /** @return the thread a {@link #wake()} would unpark now, or null */
    Thread announced() {
        return idler;
    }

    /** Ends the agent thread's park if it is in its parking phase (any thread); else nothing, and reads one field. */
    void wake() {
        final Thread thread = idler;
        if (thread != null && IDLER.compareAndSet(this, thread, null)) {
            LockSupport.unpark(thread);
        }
    }
}
