package io.rdmabus.benchmarks;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A one-way run's receiving end: counts messages and reads the clock at the expected last one only. A clock read per
 * message (25 ns on the 2-core build box, a third of a bus subscriber's time at 64 B in an async-profiler profile) is
 * a cost of the harness, not of the transport under test, and it slowed every contender's receiver alike.
 *
 * <p>The count, written at every message, lies on cache lines of its own (128 bytes of padding before and after the
 * fields, as {@link ArrivalsLine} lays them out). In an {@code AtomicLong} of its own, wherever the heap put it, it
 * cost the bus's receiving thread 8-12 ns a message and raw Aeron's about 1 ns in the same runs (docs/benchmarks.md,
 * "The harness's own count").
 *
 * <p>Threads: {@link #onMessage()} one receiving thread at a time; the rest any.
 */
final class Arrivals extends ArrivalsLine.After {
    private static final VarHandle COUNT;

    static {
        try {
            COUNT = MethodHandles.lookup().findVarHandle(ArrivalsLine.Fields.class, "count", long.class);
        } catch (final ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** @param expected the count at which {@link #onMessage()} reads the clock */
    Arrivals(final long expected) {
        this.expected = expected;
    }

    /**
     * Counts a message; at the expected count, records its arrival time first, so a thread that reads the count
     * ({@link #count()}) and then {@link #lastNs()} finds the time of the message it counted.
     */
    void onMessage() {
        final long n = (long) COUNT.get(this) + 1; // the one writer reads its own last store
        if (n == expected) {
            lastNs = System.nanoTime();
        }
        COUNT.setRelease(this, n);
    }

    /** @return messages so far */
    long count() {
        return count;
    }

    /** @param total the count whose arrival {@link #lastNs()} tells; set before the messages are sent */
    void expect(final long total) {
        expected = total;
    }

    /** Starts a new run: no messages yet, and {@code total} expected. */
    void reset(final long total) {
        count = 0;
        expected = total;
        lastNs = 0;
    }

    /** @return when the expected message arrived (System.nanoTime), or 0 before {@link #count()} reached it */
    long lastNs() {
        return lastNs;
    }
}
