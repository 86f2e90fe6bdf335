package io.rdmabus.rdma.transport;

import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the cm agent's thread is doing and since when, and the poller's report of a step stuck there.
 *
 * <p>The cm thread dials and accepts one peer at a time, so one step stuck in the kernel holds up every other dial. It
 * marks each step that can block ({@link #step}, {@link #done}: cm thread only); the poller's periodic duty
 * ({@link #reportStuck}: poller thread only) reports a step older than {@code rdma.connect.timeout.ms} + 10 s once,
 * with the cm thread's stack, and counts it ({@link RdmaCounter#CM_STALLS}). Only a report: the thread cannot be
 * unblocked.
 */
final class CmProgress {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaTransport.class);

    private final String busName;
    private final long connectTimeoutMs;
    private final long stepLimitNs;
    private final TransportCounters counters;
    // written by the cm thread, read by the poller's watchdog: volatile, so the poller sees a step's text with its start
    private volatile String what = "";
    private volatile String peer = "";
    /** Start of the current step, 0 = nothing that can block; written last by {@link #step}. */
    private volatile long sinceNs;
    /** The cm agent's thread (set once at its start; volatile: the poller reads it for the stack). */
    private volatile Thread cmThread;
    /** Poller thread: the step last reported stuck (its start), so each is reported once. */
    private long reportedForNs;

    CmProgress(final String busName, final long connectTimeoutMs, final TransportCounters counters) {
        this.busName = busName;
        this.connectTimeoutMs = connectTimeoutMs;
        this.stepLimitNs = TimeUnit.MILLISECONDS.toNanos(connectTimeoutMs + 10_000L);
        this.counters = counters;
    }

    /** cm thread, at its start. */
    void onCmThreadStart() {
        cmThread = Thread.currentThread();
    }

    /** cm thread: a step that can block starts (constant text, no allocation). */
    void step(final String stepWhat, final String stepPeer) {
        what = stepWhat;
        peer = stepPeer;
        sinceNs = System.nanoTime();
    }

    /** cm thread: the step ended. */
    void done() {
        sinceNs = 0;
    }

    /** Poller thread: reports (once per step) a cm step older than its bound, with the cm thread's stack. */
    void reportStuck(final long nowNs) {
        long since = sinceNs;
        if (since == 0 || since == reportedForNs || nowNs - since < stepLimitNs) {
            return;
        }
        reportedForNs = since;
        counters.increment(RdmaCounter.CM_STALLS);
        Thread t = cmThread;
        StringBuilder stack = new StringBuilder();
        if (t != null) {
            StackTraceElement[] frames = t.getStackTrace();
            for (int i = 0; i < Math.min(frames.length, 16); i++) {
                stack.append("\n\tat ").append(frames[i]);
            }
        }
        LOG.warn("rdma transport of bus '{}': the cm thread has been {} {} for {} ms (bound: rdma.connect.timeout.ms={} + 10 s); no "
                + "dial or accept can happen until it returns; its stack:{}", busName, what, peer,
                TimeUnit.NANOSECONDS.toMillis(nowNs - since), connectTimeoutMs, stack);
    }
}
