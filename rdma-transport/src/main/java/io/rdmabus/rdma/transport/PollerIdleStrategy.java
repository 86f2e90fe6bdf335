package io.rdmabus.rdma.transport;

import io.rdmabus.IdleStrategies;

import org.agrona.concurrent.IdleStrategy;

/**
 * The completion poller's idle strategy. With a spinning strategy configured (busy-spin, yielding, no-op) it is that
 * strategy. Otherwise (backoff, sleeping: the defaults) it yields while the poller did work within the last
 * {@code yieldWindowNs} (a stream in progress: the next completion is due soon) and otherwise sleeps in the kernel on
 * the CQ's completion channel until a completion arrives or {@code sleepTimeoutMs} passes. An idle bus costs nothing.
 *
 * <p>Why: under emulation (and on a shared core) a parked thread wakes at timer granularity (~ms), and the backoff
 * phases before parking each cost a CQ poll; measured on rxe in one TCG guest, idle duty cycles of the pollers and
 * cm agents took most of the single vCPU, starving the publisher (see {@code docs/rdma-transport-history.md}). A completion
 * event wakes the poller as soon as there is work and costs nothing while there is none; but a sleep and its wake-up
 * (arm, poll(2), read the event) cost ~0.5 ms of CPU in the emulated guest, so during a stream yielding (which hands
 * the CPU to the publisher and the other agents) is cheaper than sleeping between completions.
 */
final class PollerIdleStrategy implements IdleStrategy {
    /** What the strategy sleeps on: arms the CQ, polls once more, then waits for the event (poller thread). */
    interface Sleeper {
        /**
         * @param timeoutMs bound on the wait
         * @return completions handled while arming (then the caller does not count the cycle as idle)
         */
        int sleep(long timeoutMs);
    }

    private final IdleStrategy spinning;
    private final Sleeper sleeper;
    private final long sleepTimeoutMs;
    private final long yieldWindowNs;
    private long lastWorkNs;

    /**
     * @param configured     the bus's idle strategy (used as is when it is a spinning one)
     * @param sleeper        arms and waits on the completion channel
     * @param sleepTimeoutMs bound on one wait (commands from other threads wait at most this long)
     * @param yieldWindowNs  how long after the last work the poller yields instead of sleeping
     */
    PollerIdleStrategy(final IdleStrategy configured, final Sleeper sleeper, final long sleepTimeoutMs, final long yieldWindowNs) {
        this.spinning = IdleStrategies.neverParks(configured) ? configured : null;
        this.sleeper = sleeper;
        this.sleepTimeoutMs = sleepTimeoutMs;
        this.yieldWindowNs = yieldWindowNs;
    }

    /** @return true if the poller sleeps on the completion channel when idle (false: a spinning strategy) */
    boolean sleepsOnCompletionChannel() {
        return spinning == null;
    }

    @Override
    public void idle(final int workCount) {
        if (workCount > 0) {
            reset();
            return;
        }
        idle();
    }

    @Override
    public void idle() {
        if (spinning != null) {
            spinning.idle();
            return;
        }
        if (System.nanoTime() - lastWorkNs < yieldWindowNs) {
            Thread.yield();
            return;
        }
        if (sleeper.sleep(sleepTimeoutMs) > 0) {
            lastWorkNs = System.nanoTime();
        }
    }

    @Override
    public void reset() {
        lastWorkNs = System.nanoTime();
        if (spinning != null) {
            spinning.reset();
        }
    }

    @Override
    public String alias() {
        return spinning != null ? spinning.alias() : "rdma-completion-channel";
    }
}
