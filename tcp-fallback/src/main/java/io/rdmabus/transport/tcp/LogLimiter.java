package io.rdmabus.transport.tcp;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bounds how often one kind of log line is written: a misconfigured or hostile peer may connect again and again, and
 * each refusal is counted, but at most one line per {@link #INTERVAL_NS} is logged. Any thread.
 */
final class LogLimiter {
    /** At most one line per this interval. */
    static final long INTERVAL_NS = TimeUnit.SECONDS.toNanos(10);

    private final AtomicLong lastNs = new AtomicLong(System.nanoTime() - INTERVAL_NS);
    private final AtomicLong notLogged = new AtomicLong();

    /**
     * @return {@code null} if this line must not be logged (it was counted as not logged), else a suffix for it: empty,
     *         or how many lines were not logged since the last one
     */
    String admit() {
        final long now = System.nanoTime();
        final long last = lastNs.get();
        if (now - last < INTERVAL_NS || !lastNs.compareAndSet(last, now)) {
            notLogged.incrementAndGet();
            return null;
        }
        final long suppressed = notLogged.getAndSet(0);
        return suppressed == 0 ? "" : "; " + suppressed + " such lines not logged since the last one";
    }
}
