package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** The publication's stamp is the wall clock (epoch ns) when it is read, before and after the offset is measured again. */
class PublisherClockTest {
    /** The offset's error is half its tightest bracket (a few hundred ns); a sign or unit slip is off by decades. */
    private static final long TOLERANCE_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private static long wallNs() {
        final Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    private static void assertBetweenWallReads(final PublisherClock clock, final String when) {
        final long before = wallNs();
        final long stamp = clock.nanoTime();
        final long after = wallNs();
        assertTrue(stamp >= before - TOLERANCE_NS && stamp <= after + TOLERANCE_NS,
            when + ": stamp " + stamp + " is not within 1 ms of the wall clock read around it [" + before + ", " + after + "]");
    }

    @Test
    void stampsTheWallClockAndStillDoesAfterItResamples() throws InterruptedException {
        final PublisherClock clock = new PublisherClock();
        assertBetweenWallReads(clock, "first read");
        TimeUnit.NANOSECONDS.sleep(PublisherClock.RESAMPLE_INTERVAL_NS + TimeUnit.MILLISECONDS.toNanos(20));
        assertBetweenWallReads(clock, "read after the resample interval");
        final long first = clock.nanoTime();
        final long second = clock.nanoTime();
        assertTrue(second >= first, "two reads within one sample interval go backwards: " + first + " then " + second);
    }
}
