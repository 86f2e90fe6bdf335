package io.rdmabus.rdma.transport;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The values of the counters {@link RdmaCounter} describes, one slot per id. A counter with one writer thread (its
 * descriptor says which) is bumped with {@link #increment} (a plain read and a release write: no lock instruction on
 * the poller's path); one that several threads write with {@link #incrementAtomic}. Any thread reads (a racy snapshot,
 * for {@code counters()}).
 */
final class TransportCounters {
    private final AtomicLongArray values = new AtomicLongArray(RdmaCounter.values().length);

    /** +1 by the counter's only writer thread. */
    void increment(final RdmaCounter counter) {
        values.setRelease(counter.id(), values.getPlain(counter.id()) + 1);
    }

    /** +1 from any thread. */
    void incrementAtomic(final RdmaCounter counter) {
        values.incrementAndGet(counter.id());
    }

    /** Sets a gauge or a total (its only writer thread). */
    void set(final RdmaCounter counter, final long value) {
        values.setRelease(counter.id(), value);
    }

    long get(final RdmaCounter counter) {
        return values.getAcquire(counter.id());
    }
}
