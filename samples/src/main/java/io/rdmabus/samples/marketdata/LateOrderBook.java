package io.rdmabus.samples.marketdata;

import java.util.concurrent.TimeUnit;

import io.rdmabus.Bus;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.codecs.Quote;

import org.agrona.collections.Long2ObjectHashMap;

import reactor.core.Disposable;

/**
 * An order book started while the feed runs: it subscribes {@link MarketDataTopics#QUOTES_LAST_VALUES}, so it first
 * gets the last quote of every instrument (the feed publication's last-value cache), then the live quotes. Records how
 * complete the book was after the snapshot and the seam: the snapshot's last sequence and the first live one.
 */
final class LateOrderBook implements AutoCloseable {
    private final Bus bus;
    private final int instruments;
    private final Long2ObjectHashMap<Quote> topOfBook = new Long2ObjectHashMap<>();
    private Disposable subscription;
    private long startNs;
    private long received;
    private long lastSequence = -1;
    private Result result;
    private Throwable error;

    /**
     * What the late book saw at its seam.
     *
     * @param joinedAfterMs         when it subscribed, after the sample started
     * @param instrumentsAtSeam     instruments it knew after its first {@code instruments} messages (the snapshot)
     * @param instruments           instruments the feed quotes
     * @param lastSnapshotSequence  sequence of the snapshot's last (newest) value
     * @param firstLiveSequence     sequence of the first live quote after it
     * @param lostAtSeam            quotes the bus reported lost right before the first live one (best effort)
     * @param completeAfterMs       time from subscribing to a complete book
     */
    record Result(long joinedAfterMs, int instrumentsAtSeam, int instruments, long lastSnapshotSequence, long firstLiveSequence,
                  long lostAtSeam, long completeAfterMs) {
        /** @return true if the snapshot held every instrument and the live stream continued it (no duplicate; a gap only if reported) */
        boolean seamHolds() {
            return instrumentsAtSeam == instruments && firstLiveSequence == lastSnapshotSequence + 1 + lostAtSeam;
        }
    }

    LateOrderBook(final Bus bus, final int instruments) {
        this.bus = bus;
        this.instruments = instruments;
    }

    /** @param sampleStartNs when the sample started (System.nanoTime) */
    synchronized void start(final long sampleStartNs) {
        startNs = System.nanoTime();
        final long joinedAfterMs = TimeUnit.NANOSECONDS.toMillis(startNs - sampleStartNs);
        subscription = bus.subscribeReceived(MarketDataTopics.QUOTES_LAST_VALUES, SubscribeOptions.<Quote>defaults().withRingSize(8192))
            .subscribe(q -> onQuote(q, joinedAfterMs), this::onError);
    }

    private synchronized void onQuote(final Received<Quote> quote, final long joinedAfterMs) {
        received++;
        if (received == instruments + 1 && result == null) {
            result = new Result(joinedAfterMs, topOfBook.size(), instruments, lastSequence, quote.sequence(), quote.lostBefore(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs));
        }
        lastSequence = quote.sequence();
        final Quote previous = topOfBook.get(quote.value().instrumentId());
        if (previous == null || previous.feedSequence() < quote.value().feedSequence()) {
            topOfBook.put(quote.value().instrumentId(), quote.value());
        }
    }

    private synchronized void onError(final Throwable cause) {
        error = cause;
    }

    /** @return the seam, or null if the book has not seen a live quote yet */
    synchronized Result result() {
        return result;
    }

    /** @return the subscription's error, or null */
    synchronized Throwable error() {
        return error;
    }

    /** @return a line for the summary */
    synchronized String describe() {
        if (error != null) {
            return "late book: ERROR " + error;
        }
        if (result == null) {
            return subscription == null ? "late book: not started" : "late book: " + received + " quotes, no live quote after its snapshot yet";
        }
        return String.format("late book (joined after %,d ms): %d of %d instruments from the snapshot, complete after %,d ms; seam: last "
                + "snapshot sequence %,d, first live sequence %,d (%d reported lost between) -> %s", result.joinedAfterMs(),
            result.instrumentsAtSeam(), result.instruments(), result.completeAfterMs(), result.lastSnapshotSequence(),
            result.firstLiveSequence(), result.lostAtSeam(), result.seamHolds() ? "no gap, no duplicate" : "SEAM BROKEN");
    }

    @Override
    public synchronized void close() {
        if (subscription != null) {
            subscription.dispose();
        }
    }
}
