package io.rdmabus.core;

import java.time.Instant;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.EpochNanoClock;

/**
 * The wall clock a publication stamps its frames with (epoch nanoseconds), read as {@link System#nanoTime()} plus an
 * offset to the wall clock that is measured again every {@link #RESAMPLE_INTERVAL_NS}.
 *
 * <p>Why not Agrona's clocks: {@code SystemEpochNanoClock} reads {@link Instant#now()} on every call, through a native
 * call on JDK 25 (32 ns per read on the 2-core build box, against 25 ns for this clock's {@code System.nanoTime()},
 * which is an intrinsic; it showed as 9% of the publishing thread's samples in a JFR profile of the Aeron one-way run);
 * {@code OffsetEpochNanoClock} takes its offset from {@code System.currentTimeMillis()}, up to 1 ms off, too coarse
 * for the microsecond latencies subscribers measure from this stamp ({@code LatencyMeter}). Here the offset comes from
 * {@link Instant#now()} (microseconds on Linux), bracketed by two {@code nanoTime} reads, the tightest of
 * {@link #SAMPLES} tries; between samples the stamp drifts from the wall clock only as fast as NTP slews the wall clock
 * against the monotonic one (at most 500 ppm, 50 us in 100 ms; usually a few ppm, well under a microsecond), and a step
 * of the wall clock shows within 100 ms.
 *
 * <p>Owner: the thread that offers on the publication, one at a time as {@code BusPublication} requires (what orders
 * one such thread after another orders the plain fields). A single offer reads it just before it takes the
 * publication's ownership token, a batch offer with the token held.
 */
final class PublisherClock implements EpochNanoClock {
    static final long RESAMPLE_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(100);
    static final int SAMPLES = 3;

    private long sampledAtNs;
    private long offsetNs;

    PublisherClock() {
        sample(System.nanoTime());
    }

    @Override
    public long nanoTime() {
        final long now = System.nanoTime();
        if (now - sampledAtNs >= RESAMPLE_INTERVAL_NS) {
            sample(now);
        }
        return now + offsetNs;
    }

    private void sample(final long now) {
        long bestBracketNs = Long.MAX_VALUE;
        for (int i = 0; i < SAMPLES; i++) {
            final long before = System.nanoTime();
            final Instant wall = Instant.now();
            final long after = System.nanoTime();
            if (after - before < bestBracketNs) {
                bestBracketNs = after - before;
                offsetNs = wall.getEpochSecond() * 1_000_000_000L + wall.getNano() - (before + ((after - before) >> 1));
            }
        }
        sampledAtNs = now;
    }
}
