package io.rdmabus.transport.tcp;

import java.util.function.LongSupplier;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;

/**
 * The event loop's select strategy: for {@link TcpTransportConfig#IO_SPIN_US} after its last I/O or task (a return from
 * a blocking {@code select} counts as one) the loop keeps polling ({@code selectNow} and yield) instead of blocking in
 * {@code select}; after that it blocks as netty's default does, with no {@code selectNow} first.
 *
 * <p>Why: a publisher (or a subscriber echoing) writes from its own thread, so every write hands a drain task to the
 * loop. A loop blocked in {@code select} must be woken with a system call ({@code Selector.wakeup}) and then scheduled,
 * and the next frame arrives a few microseconds after the loop went back to sleep. While the loop polls, a wakeup finds
 * it awake and costs one failed compare-and-set. Measured on the 2-core host (docs/benchmarks-history.md, "Event-loop spin"):
 * the publisher's samples in {@code wakeup} halve and the round trip's median falls from about 90 to 30-50 us in most
 * runs. Polling without the yield was worse (the loop kept a core the publisher needed). An idle bus still blocks: the
 * window only follows work.
 *
 * <p>Owner: one instance per event loop ({@link io.netty.channel.SelectStrategyFactory} makes one per loop), used by
 * that loop's thread only.
 */
final class SpinThenSelectStrategy implements SelectStrategy {
    private final long spinNs;
    private final LongSupplier nanoClock;
    private long lastActiveNs;
    /** The last call answered {@code SELECT}: the loop has been in a blocking select since. */
    private boolean blocked;

    /** @param spinNs how long after the loop's last work it polls before blocking; > 0 */
    SpinThenSelectStrategy(final long spinNs) {
        this(spinNs, System::nanoTime);
    }

    /** @param spinNs as above @param nanoClock {@link System#nanoTime()}, or a test's clock */
    SpinThenSelectStrategy(final long spinNs, final LongSupplier nanoClock) {
        this.spinNs = spinNs;
        this.nanoClock = nanoClock;
        this.lastActiveNs = nanoClock.getAsLong() - spinNs; // a new loop has done no work: it blocks at once
    }

    @Override
    public int calculateStrategy(final IntSupplier selectSupplier, final boolean hasTasks) throws Exception {
        final long now = nanoClock.getAsLong();
        if (blocked) {
            // back from a blocking select: the loop was woken by I/O (already processed, so selectNow would see none),
            // by a task, or by a scheduled task's deadline; each is work, and the next frame tends to follow it
            blocked = false;
            lastActiveNs = now;
        }
        if (!hasTasks && now - lastActiveNs >= spinNs) {
            blocked = true;
            return SelectStrategy.SELECT; // as netty's default with no tasks: no selectNow before the blocking select
        }
        final int ready = selectSupplier.get(); // selectNow: never blocks
        if (ready > 0 || hasTasks) {
            lastActiveNs = now;
            return ready;
        }
        Thread.yield(); // two cores: the publisher and the bus's agents may need the CPU more than this poll does
        return ready;
    }
}
