package io.rdmabus.samples.support;

import java.util.concurrent.atomic.AtomicLong;

import io.rdmabus.Received;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.SystemEpochNanoClock;

/**
 * Counts one stream of received messages: how many, how many lost before them ({@link Received#lostBefore()}), and
 * end-to-end latency from the publisher's timestamp ({@link Received#timestampNs()}, epoch ns) to now on the same
 * kind of clock. One thread records (the subscriber), another reads ({@link #interval()}, {@link #total()}).
 * Publisher and subscriber clocks must agree: true in one process; across hosts it needs synchronised clocks.
 */
public final class LatencyMeter {
    private final EpochNanoClock clock = new SystemEpochNanoClock();
    private final Recorder recorder = new Recorder(3);
    private final Histogram total = new Histogram(3);
    private final Histogram steadyState = new Histogram(3);
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong lost = new AtomicLong();
    private Histogram intervalHistogram;
    private long lastReceived;
    private long lastLost;
    private int intervals;

    /** Intervals (seconds, when taken once a second) left out of {@link #steadyState()}: connection set-up, JIT warm-up. */
    public static final int WARM_UP_INTERVALS = 2;

    /** Creates an empty meter. */
    public LatencyMeter() {
    }

    /**
     * Records one received message. Called by the one subscriber thread.
     *
     * @param message the message
     */
    public void record(final Received<?> message) {
        recordLatency(message.timestampNs());
        if (message.lostBefore() > 0) {
            lost.addAndGet(message.lostBefore());
        }
        received.lazySet(received.get() + 1);
    }

    /**
     * Records a latency from a publisher's epoch-ns timestamp without counting a message.
     *
     * @param publishedEpochNs when it was published; 0 (a topic without timestamps) records nothing
     */
    public void recordLatency(final long publishedEpochNs) {
        if (publishedEpochNs == 0) {
            return;
        }
        recorder.recordValue(Math.max(0, clock.nanoTime() - publishedEpochNs));
    }

    /** @return messages recorded so far */
    public long received() {
        return received.get();
    }

    /** @return messages reported lost so far (sum of {@code lostBefore}) */
    public long lost() {
        return lost.get();
    }

    /**
     * Takes the latency histogram since the last call and adds it to {@link #total()}. Call from one reporting thread.
     *
     * @return the interval: counts since the last call and the latency histogram (ns) of that interval
     */
    public synchronized Interval interval() {
        intervalHistogram = recorder.getIntervalHistogram(intervalHistogram);
        total.add(intervalHistogram);
        if (++intervals > WARM_UP_INTERVALS) {
            steadyState.add(intervalHistogram);
        }
        final long r = received.get();
        final long l = lost.get();
        final Interval interval = new Interval(r - lastReceived, l - lastLost, intervalHistogram.copy());
        lastReceived = r;
        lastLost = l;
        return interval;
    }

    /** @return a copy of every latency taken by {@link #interval()} so far (call {@link #interval()} first to include the latest) */
    public synchronized Histogram total() {
        return total.copy();
    }

    /**
     * @return a copy of the latencies of every interval taken by {@link #interval()} after the first {@link #WARM_UP_INTERVALS}
     */
    public synchronized Histogram steadyState() {
        return steadyState.copy();
    }

    /**
     * @param received messages in the interval
     * @param lost     messages reported lost in the interval
     * @param latencyNs latency histogram of the interval, in ns
     */
    public record Interval(long received, long lost, Histogram latencyNs) {
    }

    /**
     * @param histogram latencies in ns
     * @return {@code p50 12.3us p99 45.6us p99.9 78.9us max 1.2ms}, or {@code no samples}
     */
    public static String percentiles(final Histogram histogram) {
        if (histogram.getTotalCount() == 0) {
            return "no samples";
        }
        return "p50 " + micros(histogram.getValueAtPercentile(50)) + " p99 " + micros(histogram.getValueAtPercentile(99))
            + " p99.9 " + micros(histogram.getValueAtPercentile(99.9)) + " max " + micros(histogram.getMaxValue());
    }

    /** @param ns nanoseconds @return a short human figure in us or ms */
    public static String micros(final long ns) {
        if (ns >= 10_000_000L) {
            return String.format("%.0fms", ns / 1e6);
        }
        if (ns >= 1_000_000L) {
            return String.format("%.1fms", ns / 1e6);
        }
        return String.format("%.1fus", ns / 1e3);
    }
}
