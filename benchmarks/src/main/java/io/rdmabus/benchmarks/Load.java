package io.rdmabus.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

/** One side-by-side contender: moves {@code messages} one-way as fast as it can, and does ping-pong round trips. */
interface Load extends AutoCloseable {
    /** Bound on any one wait in the harness: a stuck run fails instead of hanging. */
    long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(60);

    /** @return a short label, e.g. {@code bus/aeron-ipc} */
    String label();

    /**
     * Sends {@code messages} messages of {@code sizeBytes} one way, reliably, as fast as they are taken.
     *
     * @param messages  how many
     * @param sizeBytes payload size
     * @return nanoseconds from the first timed send (after a priming message has arrived: {@link #prime}) to the last receipt
     */
    long oneWay(int messages, int sizeBytes);

    /**
     * Round trips, one at a time.
     *
     * @param pings     measured round trips (after a warm-up of {@code pings / 10})
     * @param sizeBytes payload size
     * @return the round-trip times in ns
     */
    Histogram pingPong(int pings, int sizeBytes);

    @Override
    void close();

    /** @return the idle strategy every contender's own loops use: the bus's default, so the comparison is like for like */
    static IdleStrategy idle() {
        return new BackoffIdleStrategy(10, 20, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(1));
    }

    /**
     * What a one-way run does before its clock starts: sends one message and waits until it has arrived, so the run
     * times messages on a path that is set up end to end. Without it the clock ran while the receiving side was still
     * joining: an Aeron publication reports connected before the subscribing client has the image, which that client's
     * conductor maps on its next duty cycle (it sleeps 16 ms between them by default; about 10 ms measured here), and in
     * a run of 200,000 messages that wait was as long as the messages' own time, for raw and bus alike.
     *
     * @param label      the contender, for a timeout's message
     * @param deadlineNs a {@link System#nanoTime()} deadline
     * @param send       offers the priming message once: true if it was taken (else it is offered again)
     * @param arrivals   the run's receiving end; its first message is the priming one
     * @param drive      work the waiting thread does for its contender while it waits (an {@code INVOKER} bus's duty cycle)
     */
    static void prime(final String label, final long deadlineNs, final BooleanSupplier send, final Arrivals arrivals, final IntSupplier drive) {
        while (!send.getAsBoolean()) {
            if (pastDeadline(deadlineNs)) {
                throw timedOut(label + " priming message offer");
            }
            drive.getAsInt();
            Thread.yield();
        }
        while (arrivals.count() < 1) {
            if (pastDeadline(deadlineNs)) {
                throw timedOut(label + " priming message");
            }
            drive.getAsInt();
            Thread.yield();
        }
    }

    /**
     * @param deadlineNs a {@link System#nanoTime()} deadline
     * @param what       what was awaited, for the message
     */
    static void checkDeadline(final long deadlineNs, final String what) {
        if (pastDeadline(deadlineNs)) {
            throw timedOut(what);
        }
    }

    /**
     * For a wait loop whose message is built from parts: {@code if (pastDeadline(d)) throw timedOut(...)} builds it only
     * on the way out, not on every spin (a string per spin would be the harness's cost, charged to the contender).
     *
     * @param deadlineNs a {@link System#nanoTime()} deadline
     * @return true once it has passed
     */
    static boolean pastDeadline(final long deadlineNs) {
        return System.nanoTime() > deadlineNs;
    }

    /** @param what what was awaited @return the exception that says so */
    static IllegalStateException timedOut(final String what) {
        return new IllegalStateException("timed out waiting for " + what);
    }

    /** @param b buffer @param at index @param v value written little-endian */
    static void putLong(final byte[] b, final int at, final long v) {
        for (int i = 0; i < 8; i++) {
            b[at + i] = (byte) (v >>> (8 * i));
        }
    }

    /** @param b buffer @param at index @return the little-endian long there */
    static long getLong(final byte[] b, final int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v |= (b[at + i] & 0xFFL) << (8 * i);
        }
        return v;
    }
}
