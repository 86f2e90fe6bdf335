package io.rdmabus.rdma.transport;

import io.rdmabus.rdma.verbs.EventFd;
import io.rdmabus.spi.IdleSleeper;

/**
 * A hosted poller's sleeper ({@code SHARED}): the bus's shared thread, once idle, sleeps on the CQ's completion channel
 * and on an eventfd ({@link Poller#sleep(long, EventFd)}), so a completion, a command to the poller or to the bus
 * (their wake signals the eventfd) or the bound ends the sleep. The bound is the host's, shortened to the poller's own
 * timers: half the keepalive interval, and the UD gap-recovery wait when recovery is on (each then runs at most that
 * late).
 *
 * <p>Threads: {@link #sleep} and {@link #close} on the poller's thread (the shared thread); {@link #wake} on any.
 */
final class PollerSleeper implements IdleSleeper {
    private final Poller poller;
    private final EventFd wakeup;
    private final long boundMs;
    /** Poller's thread: true once {@link #close} ran (the completion channel may go after it). */
    private boolean closed;

    /**
     * @param poller  the hosted poller
     * @param wakeup  what wakers signal
     * @param boundMs the poller's bound on one sleep
     */
    PollerSleeper(final Poller poller, final EventFd wakeup, final long boundMs) {
        this.poller = poller;
        this.wakeup = wakeup;
        this.boundMs = boundMs;
    }

    /**
     * @param config the transport's settings
     * @return the bound the poller's timers put on one sleep, ms (Long.MAX_VALUE: none)
     */
    static long boundMs(final RdmaTransportConfig config) {
        long bound = Long.MAX_VALUE;
        if (config.keepaliveMs() > 0) {
            bound = Math.max(1, config.keepaliveMs() / 2);
        }
        if (config.ud().mode() != UdConfig.Mode.RC && config.ud().recoveryFrames() > 0) {
            bound = Math.min(bound, config.ud().recoveryMs());
        }
        return bound;
    }

    @Override
    public int sleep(final long timeoutMs) {
        if (closed) {
            return CLOSED;
        }
        return poller.sleep(Math.min(timeoutMs, boundMs), wakeup);
    }

    @Override
    public void wake() {
        wakeup.signal(); // nothing once closed
    }

    /** The poller closes: no more sleeps, and the eventfd goes (a late wake does nothing). */
    void close() {
        closed = true;
        wakeup.close();
    }
}
