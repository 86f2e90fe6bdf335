package io.rdmabus.transport.tcp;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;

/**
 * The event loop's select strategy: for {@link TcpTransportConfig#IO_SPIN_US} after its last I/O or task the loop keeps
 * polling ({@code selectNow} and yield) instead of blocking in {@code select}; after that it blocks as netty's default
 * does.
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
    private long lastActiveNs;

    /** @param spinNs how long after the loop's last work it polls before blocking; > 0 */
    SpinThenSelectStrategy(final long spinNs) {
        this.spinNs = spinNs;
    }

    @Override
    public int calculateStrategy(final IntSupplier selectSupplier, final boolean hasTasks) throws Exception {
        final int ready = selectSupplier.get(); // selectNow: never blocks
        final long now = System.nanoTime();
        if (ready > 0 || hasTasks) {
            lastActiveNs = now;
            return ready;
        }
        if (now - lastActiveNs < spinNs) {
            Thread.yield(); // two cores: the publisher and the bus's agents may need the CPU more than this poll does
            return ready;
        }
        return SelectStrategy.SELECT;
    }
}
