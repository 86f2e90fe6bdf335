package io.rdmabus.benchmarks;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A one-way run's receiving end: counts messages and reads the clock at the expected last one only. A clock read per
 * message (25 ns on the 2-core build box, a third of a bus subscriber's time at 64 B in an async-profiler profile) is
 * a cost of the harness, not of the transport under test, and it slowed every contender's receiver alike.
 *
 * <p>Threads: {@link #onMessage()} one receiving thread at a time; the rest any.
 */
final class Arrivals {
    private final AtomicLong count = new AtomicLong();
    private volatile long expected;
    private volatile long lastNs;

    /** @param expected the count at which {@link #onMessage()} reads the clock */
    Arrivals(final long expected) {
        this.expected = expected;
    }

    /**
     * Counts a message; at the expected count, records its arrival time first, so a thread that reads the count
     * ({@link #count()}) and then {@link #lastNs()} finds the time of the message it counted.
     */
    void onMessage() {
        final long n = count.get() + 1;
        if (n == expected) {
            lastNs = System.nanoTime();
        }
        count.lazySet(n);
    }

    /** @return messages so far */
    long count() {
        return count.get();
    }

    /** @param total the count whose arrival {@link #lastNs()} tells; set before the messages are sent */
    void expect(final long total) {
        expected = total;
    }

    /** Starts a new run: no messages yet, and {@code total} expected. */
    void reset(final long total) {
        count.set(0);
        expected = total;
        lastNs = 0;
    }

    /** @return when the expected message arrived (System.nanoTime), or 0 before {@link #count()} reached it */
    long lastNs() {
        return lastNs;
    }
}
