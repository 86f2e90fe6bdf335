package io.rdmabus.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import io.rdmabus.IdleStrategies;
import io.rdmabus.spi.IdleSleeper;

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
 * line that stays in its own cache: {@link #idler} and {@link #sleeper} are padded away from the fields this thread
 * writes at every idle step ({@link WakerLine}). (A field written around every idle step, or a read of the ring's consumer
 * sequence on every message to find the first one after the ring ran empty, would move a cache line between the CPUs
 * with each message whenever the delivering thread keeps up, and so idles between messages.)
 *
 * <p>Owner: {@link #idle}, {@link #reset} and the plain fields belong to the agent's thread; {@link #wake()} runs on
 * any. A waker takes the thread out of {@link #idler} before it unparks it, so of the messages that land during one
 * park only the first pays for the unpark; the agent puts itself back before its next park. A wake that races with
 * the thread announcing itself can be missed: then the delivery waits for that park to end (at most the strategy's
 * longest park), as it would without this class.
 *
 * <p><b>Sleeping instead of parking</b> ({@code SHARED} with a transport that offers an {@link IdleSleeper}: the rdma
 * poller's completion channel): once the parking phase has parked for {@link #PARK_BEFORE_SLEEP_NS}, the thread sleeps
 * in the sleeper, for up to {@link #SLEEP_BOUND_MS} at a time, instead of parking, and a waker ends the sleep through
 * the sleeper. A timer park lasts at most 1 ms, so an idle shared thread woke about a thousand times a second; on one
 * vCPU that cost a publisher a third of its rate (docs/benchmarks.md, "Threading mode and single offers over UD"). As
 * a sleep is long, no wake may be missed: the thread runs another duty cycle after it announces itself, before it
 * sleeps, and a waker orders its own stores (a ring slot) before it reads {@link #idler} with a full fence; so either
 * the waker sees the announcement or that cycle sees the waker's work. The sleeper's wake is sticky (an event file
 * descriptor): one that comes before the sleep ends the next sleep at once. What no waker announces keeps the parks:
 * while messages wait for a subscriber's demand ({@link #parkWhile}: a request is seen only by looking) the thread
 * parks instead of sleeping.
 */
final class WakeableIdleStrategy extends WakerLine.After implements IdleStrategy {
    /** From {@link #emptyIdlesBeforePark}: the strategy never parks, so there is never anything to wake. */
    static final int NEVER = Integer.MAX_VALUE;
    /** Bound on one sleep in an {@link IdleSleeper}: how late a duty that no event or waker announces may run. */
    static final long SLEEP_BOUND_MS = 20;
    /**
     * With a sleeper, how long the parking phase parks (as the configured strategy does) before it sleeps: a gap
     * shorter than this (a round trip in progress) does not pay a sleep and its wake-up, which in the lab's emulated
     * guests cost a round trip about 0.1 ms more than parks at its fastest (docs/benchmarks-history.md, "The shared
     * thread sleeps on the completion channel").
     */
    static final long PARK_BEFORE_SLEEP_NS = TimeUnit.MILLISECONDS.toNanos(2);

    private static final VarHandle IDLER;

    static {
        try {
            IDLER = MethodHandles.lookup().findVarHandle(WakerLine.Fields.class, "idler", Thread.class);
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
    /** With a sleeper: parks this long into the parking phase before it sleeps ({@link #PARK_BEFORE_SLEEP_NS}). */
    private final long parkBeforeSleepNs;
    /** When the parking phase began (agent's thread; read only with a sleeper). */
    private long parkingSinceNs;
    /** Asked before each sleep (agent's thread): true while work is due that no waker announces (it parks instead). */
    private volatile BooleanSupplier parkInstead = () -> false;

    WakeableIdleStrategy(final IdleStrategy delegate) {
        this(delegate, emptyIdlesBeforePark(delegate));
    }

    /**
     * @param delegate        the configured strategy
     * @param idlesBeforePark empty duty cycles in a row after which {@code delegate} may park, or {@link #NEVER}
     */
    WakeableIdleStrategy(final IdleStrategy delegate, final int idlesBeforePark) {
        this(delegate, idlesBeforePark, PARK_BEFORE_SLEEP_NS);
    }

    /**
     * @param delegate          the configured strategy
     * @param idlesBeforePark   empty duty cycles in a row after which {@code delegate} may park, or {@link #NEVER}
     * @param parkBeforeSleepNs with a sleeper, how long the parking phase parks before it sleeps
     */
    WakeableIdleStrategy(final IdleStrategy delegate, final int idlesBeforePark, final long parkBeforeSleepNs) {
        this.delegate = delegate;
        this.idlesBeforePark = idlesBeforePark;
        this.parkBeforeSleepNs = parkBeforeSleepNs;
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
            if (sleeper != null) {
                parkingSinceNs = System.nanoTime();
            }
        }
        final IdleSleeper sleeping = sleeper;
        if (idler == null) { // the first park of this idle spell, or a waker took it during the last one
            idler = Thread.currentThread();
            if (sleeping != null) {
                return; // one more duty cycle first: it finds what a waker that did not see the announcement left
            }
        }
        if (sleeping == null || System.nanoTime() - parkingSinceNs < parkBeforeSleepNs || parkInstead.getAsBoolean()) {
            delegate.idle();
            return;
        }
        final int handled = sleeping.sleep(SLEEP_BOUND_MS);
        if (handled == IdleSleeper.CLOSED) {
            sleeper = null; // parks from now on
        } else if (handled > 0) {
            resume(); // it handled work while preparing to sleep: spin and yield again before the next sleep
        }
    }

    /**
     * @param condition asked on the agent's thread before each sleep: while it is true the thread parks instead (e.g.
     *                  messages wait for a subscriber's demand, which nothing announces); set before the thread starts
     */
    void parkWhile(final BooleanSupplier condition) {
        this.parkInstead = condition;
    }

    /**
     * Lets the parking phase sleep in {@code sleeping} instead of parking (the thread that starts the transport).
     *
     * @return false if this strategy never parks (a spinning one: nothing to replace) or already has a sleeper
     */
    boolean sleepIn(final IdleSleeper sleeping) {
        if (idlesBeforePark == NEVER || sleeper != null) {
            return false;
        }
        sleeper = sleeping;
        return true;
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

    /**
     * Ends the agent thread's park or sleep if it is in its parking phase (any thread); else nothing, and reads one field
     * (two and a full fence with a sleeper).
     */
    void wake() {
        final IdleSleeper sleeping = sleeper;
        if (sleeping != null) {
            VarHandle.fullFence(); // the caller's stores (a ring slot) before the read of idler (see "Sleeping instead of parking")
        }
        final Thread thread = idler;
        if (thread != null && IDLER.compareAndSet(this, thread, null)) {
            if (sleeping != null) {
                sleeping.wake();
            }
            LockSupport.unpark(thread); // also when it sleeps: a sleeper closed meanwhile leaves it parking
        }
    }
}
