package io.rdmabus.samples.marketdata;

import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.Bus;
import io.rdmabus.BusException;
import io.rdmabus.BusPublication;
import io.rdmabus.PublishStatus;
import io.rdmabus.codecs.AggressorSide;
import io.rdmabus.codecs.Quote;
import io.rdmabus.codecs.Trade;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SystemEpochNanoClock;

/**
 * The publisher: a random walk of quotes over a set of instruments at a steady rate plus periodic bursts, and a
 * trade every {@code tradeEvery} quotes. Quotes are best effort (each offered once; refused ones are counted as
 * dropped at the source), trades are reliable (retried until taken, so a slow subscriber slows the feed). The quotes
 * due at once (a burst, or the ticks a paced loop caught up on) go out with the batch offer, {@value #BATCH} per call
 * ({@code BusPublication.offer(values, offset, length)}: over rdma one verbs post per call), each trade after the call
 * that carried its quote.
 */
final class MarketDataFeed implements Runnable {
    private static final long PRICE_TICK_E9 = 10_000_000L; // 0.01
    private static final long HALF_SPREAD_E9 = 5_000_000L;
    private static final int MAX_CATCH_UP = 4096; // after a stall, do not fire an unbounded burst
    private static final long WARM_UP_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(20);
    /** Quotes per batch offer. */
    static final int BATCH = 64;

    private final MarketDataSample.Settings settings;
    private final BusPublication<Quote> quotes;
    private final BusPublication<Trade> trades;
    private final CountDownLatch subscribersReady;
    private final EpochNanoClock clock = new SystemEpochNanoClock();
    private final IdleStrategy idle = new BackoffIdleStrategy(10, 20, 1_000, 100_000);
    private final SplittableRandom random = new SplittableRandom(42);
    private final long[] midE9;
    private final AtomicLong quotesSent = new AtomicLong();
    private final AtomicLong quotesDropped = new AtomicLong();
    private final AtomicLong tradesSent = new AtomicLong();
    private volatile boolean running = true;
    private volatile Throwable failure;
    private final Quote[] batch = new Quote[BATCH];
    /** Per quote of {@link #batch}: a trade is due after it ({@code tradeEvery}). */
    private final boolean[] tradeAfter = new boolean[BATCH];
    private long feedSequence;
    private long nextTradeId = 1;

    MarketDataFeed(final Bus bus, final MarketDataSample.Settings settings, final CountDownLatch subscribersReady) {
        this.settings = settings;
        this.quotes = bus.publication(MarketDataTopics.QUOTES_LAST_VALUES); // keeps the last quote per instrument
        this.trades = bus.publication(MarketDataTopics.TRADES);
        this.subscribersReady = subscribersReady;
        this.midE9 = new long[settings.instruments()];
        for (int i = 0; i < midE9.length; i++) {
            midE9[i] = (100 + i) * 1_000_000_000L;
        }
    }

    @Override
    public void run() {
        try {
            warmUp();
            final long startNs = System.nanoTime();
            final long endNs = startNs + settings.durationNs();
            final long burstIntervalNs = TimeUnit.MILLISECONDS.toNanos(settings.burstIntervalMs());
            long nextBurstNs = startNs + burstIntervalNs;
            long paced = 0;
            while (running) {
                final long nowNs = System.nanoTime();
                if (nowNs >= endNs) {
                    break;
                }
                int work = 0;
                if (settings.burstSize() > 0 && nowNs >= nextBurstNs) {
                    sendQuotes(settings.burstSize());
                    work += settings.burstSize();
                    nextBurstNs += burstIntervalNs;
                }
                final long due = (long) ((nowNs - startNs) * (settings.quotesPerSecond() / 1e9));
                final long behind = Math.min(due - paced, MAX_CATCH_UP);
                sendQuotes((int) Math.max(0, behind));
                paced = Math.max(paced + behind, due - MAX_CATCH_UP);
                work += (int) behind;
                if (work == 0) {
                    LockSupport.parkNanos(50_000); // paced: sleep between ticks instead of spinning
                }
            }
        } catch (final RuntimeException ex) {
            failure = ex;
        } finally {
            running = false;
        }
    }

    /** Sends warm-up trades until every subscriber has seen one, so none misses the first real trade. */
    private void warmUp() {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        final Trade marker = new Trade(0, clock.nanoTime(), 0, 0, MarketDataTopics.WARM_UP_TRADE_ID, AggressorSide.BUY);
        while (subscribersReady.getCount() > 0) {
            if (System.nanoTime() > deadlineNs) {
                throw new BusException("subscribers did not connect within 15 s on transport '" + settings.transport()
                    + "' (" + subscribersReady.getCount() + " missing): check the transport settings");
            }
            if (trades.isConnected()) {
                trades.offer(marker);
            }
            LockSupport.parkNanos(WARM_UP_INTERVAL_NS);
        }
    }

    /** Sends {@code n} quotes, {@link #BATCH} per batch offer, each due trade after the offer that carried its quote. */
    private void sendQuotes(final int n) {
        for (int done = 0; done < n; ) {
            final int length = Math.min(BATCH, n - done);
            for (int i = 0; i < length; i++) {
                batch[i] = nextQuote();
                tradeAfter[i] = feedSequence % settings.tradeEvery() == 0;
            }
            offerOnce(length);
            for (int i = 0; i < length; i++) {
                if (tradeAfter[i]) {
                    final Quote q = batch[i];
                    sendTrade(q.instrumentId(), q.bidPriceE9() + HALF_SPREAD_E9, q.exchangeTimestampNs());
                }
                batch[i] = null;
            }
            done += length;
        }
    }

    private Quote nextQuote() {
        final int index = random.nextInt(midE9.length);
        midE9[index] += random.nextBoolean() ? PRICE_TICK_E9 : -PRICE_TICK_E9;
        return new Quote(index + 1, clock.nanoTime(), midE9[index] - HALF_SPREAD_E9, midE9[index] + HALF_SPREAD_E9,
            100 + random.nextInt(900), 100 + random.nextInt(900), ++feedSequence);
    }

    /**
     * Offers {@link #batch}'s first {@code length} quotes, each once: a batch offer takes a prefix of what it is given
     * and stops at the first quote it refuses, which is dropped (counted); the next offer starts after it.
     */
    private void offerOnce(final int length) {
        int from = 0;
        while (from < length) {
            final int asked = length - from;
            final int taken = Math.max(0, quotes.offer(batch, from, asked)); // a refusal of the first quote is negative
            quotesSent.lazySet(quotesSent.get() + taken);
            from += taken;
            if (taken < asked) {
                quotesDropped.lazySet(quotesDropped.get() + 1); // best effort: no subscriber or no room, never retried
                from++;
            }
        }
    }

    private void sendTrade(final long instrumentId, final long priceE9, final long nowEpochNs) {
        final Trade trade = new Trade(instrumentId, nowEpochNs, priceE9, 1 + random.nextInt(100), nextTradeId,
            random.nextBoolean() ? AggressorSide.BUY : AggressorSide.SELL);
        int status;
        idle.reset();
        while ((status = trades.offer(trade)) != PublishStatus.OK) {
            if (status == PublishStatus.CLOSED || status == PublishStatus.MESSAGE_TOO_LARGE || !running) {
                throw new BusException("trade " + nextTradeId + " not published: " + PublishStatus.describe(status));
            }
            idle.idle(); // reliable: back-pressured by the slowest subscriber, retry
        }
        nextTradeId++;
        tradesSent.lazySet(tradesSent.get() + 1);
    }

    /** Asks the feed to stop early. */
    void stop() {
        running = false;
    }

    boolean running() {
        return running;
    }

    long quotesSent() {
        return quotesSent.get();
    }

    long quotesDropped() {
        return quotesDropped.get();
    }

    long tradesSent() {
        return tradesSent.get();
    }

    Throwable failure() {
        return failure;
    }

    void close() {
        quotes.close();
        trades.close();
    }
}
