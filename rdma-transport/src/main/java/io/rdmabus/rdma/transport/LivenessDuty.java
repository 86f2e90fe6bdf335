package io.rdmabus.rdma.transport;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The poller's periodic duties: when a keepalive is due ({@code rdma.keepalive.ms}: the poller's control flush then sends
 * one on every connection with nothing in flight), the send-stall watchdog ({@code rdma.send.stall.ms}) and the report of
 * a stuck cm step ({@link CmProgress}), checked every eighth of the stall bound.
 *
 * <p>Owner: the poller thread, which runs {@link #onDuty} every duty cycle.
 */
final class LivenessDuty {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaTransport.class);

    private final RdmaContext ctx;
    private final RdmaTransportConfig config;
    private final BiConsumer<Connection, Throwable> fail;
    /** {@link RdmaTransportConfig#keepaliveMs()} in nanoseconds, 0 = no keepalive. */
    private final long keepaliveNs;
    /** {@link RdmaTransportConfig#sendStallMs()} in nanoseconds, 0 = no send-stall watchdog. */
    private final long sendStallNs;
    private long nextKeepaliveNs;
    private long nextStallCheckNs;
    /** This duty cycle is a keepalive one (set by {@link #onDuty}). */
    private boolean keepaliveDue;

    LivenessDuty(final RdmaContext ctx, final BiConsumer<Connection, Throwable> fail) {
        this.ctx = ctx;
        this.config = ctx.config;
        this.fail = fail;
        this.keepaliveNs = TimeUnit.MILLISECONDS.toNanos(config.keepaliveMs());
        this.sendStallNs = TimeUnit.MILLISECONDS.toNanos(config.sendStallMs());
    }

    /**
     * One duty cycle: decides whether a keepalive is due ({@link #keepaliveDue()}) and runs the watchdogs when their
     * check is due.
     *
     * @return connections failed by the send-stall watchdog
     */
    int onDuty(final List<Connection> active) {
        keepaliveDue = false;
        if (keepaliveNs == 0 && sendStallNs == 0) {
            return 0;
        }
        int work = 0;
        long now = System.nanoTime();
        if (keepaliveNs > 0 && now - nextKeepaliveNs >= 0) {
            keepaliveDue = true;
            nextKeepaliveNs = now + keepaliveNs;
        }
        if (sendStallNs > 0 && now - nextStallCheckNs >= 0) {
            nextStallCheckNs = now + sendStallNs / 8;
            ctx.cmProgress.reportStuck(now);
            for (int i = active.size() - 1; i >= 0; i--) {
                work += checkSendProgress(active.get(i), now);
            }
        }
        return work;
    }

    /** @return whether this duty cycle sends keepalives */
    boolean keepaliveDue() {
        return keepaliveDue;
    }

    /**
     * Send-stall watchdog: a connection whose device owes a completion (a control send, or a signalled data send)
     * and has polled none for {@code rdma.send.stall.ms} is failed, so the redial, the replacement of the accepted
     * connection and RELIABLE resume take over. On rxe a send posted while the link was down was seen neither to
     * complete nor to fail after the link came back, and it blocks the keepalive and every credit behind it.
     *
     * @return 1 if the connection was failed
     */
    private int checkSendProgress(final Connection c, final long nowNs) {
        boolean owed = c.anyControlInFlight() || c.signaledDataSendInFlight();
        if (!owed || c.sendCompletions != c.sendCompletionsAtCheck) {
            c.sendCompletionsAtCheck = c.sendCompletions;
            c.stalledSinceNs = 0;
            return 0;
        }
        if (c.stalledSinceNs == 0) {
            c.stalledSinceNs = nowNs;
            return 0;
        }
        if (nowNs - c.stalledSinceNs < sendStallNs) {
            return 0;
        }
        long stalledMs = TimeUnit.NANOSECONDS.toMillis(nowNs - c.stalledSinceNs);
        ctx.counters.increment(RdmaCounter.SENDS_STALLED);
        LOG.warn("rdma transport of bus '{}': {} has had sends in flight ({} unreleased data sends, control in flight: {}) "
                + "and no send completion for {} ms (rdma.send.stall.ms={}); closing the connection, seeds redial and RELIABLE "
                + "subscribers resume", ctx.busName, c, c.unreleasedSends(), c.anyControlInFlight(), stalledMs, config.sendStallMs());
        fail.accept(c, null);
        return 1;
    }
}
