package io.rdmabus.rdma.transport;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refused peers: counts each ({@link RdmaCounter#REFUSED_PEERS}) and logs it, at most one line per
 * {@link #LOG_INTERVAL_NS} with the count since (a misconfigured or hostile peer retries for ever). Any thread: the cm
 * agent refuses connect requests and replies, the poller missing or wrong AUTH.
 */
final class PeerRefusals {
    /** At most one log line per this interval about refused peers. */
    static final long LOG_INTERVAL_NS = TimeUnit.SECONDS.toNanos(10);
    private static final Logger LOG = LoggerFactory.getLogger(RdmaTransport.class);

    private final String busName;
    private final TransportCounters counters;
    private final AtomicLong notLogged = new AtomicLong();
    /** Volatile: two threads refuse; a race between them costs at most one extra log line, never a lost count. */
    private volatile long lastLogNs = System.nanoTime() - LOG_INTERVAL_NS;

    PeerRefusals(final String busName, final TransportCounters counters) {
        this.busName = busName;
        this.counters = counters;
    }

    /** Counts a refused peer and logs it, rate-limited (any thread). */
    void refused(final String peer, final String why) {
        counters.incrementAtomic(RdmaCounter.REFUSED_PEERS);
        long now = System.nanoTime();
        if (now - lastLogNs >= LOG_INTERVAL_NS) {
            lastLogNs = now;
            long suppressed = notLogged.getAndSet(0);
            LOG.warn("rdma transport of bus '{}': refused peer {}: {} ({} refusals in all{})", busName, peer, why,
                    counters.get(RdmaCounter.REFUSED_PEERS), suppressed > 0 ? ", " + suppressed + " not logged since the last line" : "");
        } else {
            notLogged.incrementAndGet();
        }
    }
}
