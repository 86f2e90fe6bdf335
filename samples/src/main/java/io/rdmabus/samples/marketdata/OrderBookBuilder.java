package io.rdmabus.samples.marketdata;

import java.util.concurrent.CountDownLatch;

import io.rdmabus.Bus;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.codecs.MarketDataCodecs;
import io.rdmabus.codecs.Quote;

import org.agrona.collections.Long2ObjectHashMap;

/**
 * Keeps the top of book per instrument from the quote stream (best effort: a lost tick is replaced by the next
 * one) and counts trades (reliable). Keeps up with the feed: its ring uses the default policy.
 */
final class OrderBookBuilder extends MarketDataSubscriber {
    private final Long2ObjectHashMap<Quote> topOfBook = new Long2ObjectHashMap<>();
    private volatile int instruments;

    OrderBookBuilder(final Bus bus, final CountDownLatch ready) {
        super("book", bus, ready);
    }

    @Override
    void start() {
        add(bus().subscribeReceived(MarketDataTopics.QUOTES, SubscribeOptions.<Quote>defaults().withRingSize(8192)).subscribe(q -> {
            quotes().record(q);
            update(q.value());
        }, this::onError));
        add(bus().subscribeReceived(MarketDataTopics.TRADES, SubscribeOptions.defaults()).subscribe(this::onTrade, this::onError));
    }

    /** Uncontended lock: the summary reads the map from another thread. */
    private synchronized void update(final Quote quote) {
        final Quote previous = topOfBook.get(quote.instrumentId());
        if (previous == null || previous.feedSequence() < quote.feedSequence()) {
            topOfBook.put(quote.instrumentId(), quote);
            instruments = topOfBook.size();
        }
    }

    /** @return instruments with a known top of book */
    int instruments() {
        return instruments;
    }

    @Override
    synchronized String describeState() {
        final StringBuilder out = new StringBuilder("top of book for ").append(instruments).append(" instruments");
        topOfBook.values().stream().sorted((a, b) -> Long.compare(a.instrumentId(), b.instrumentId())).limit(3).forEach(q ->
            out.append(String.format("; #%d %d @ %.4f / %.4f @ %d", q.instrumentId(), q.bidSize(), price(q.bidPriceE9()),
                price(q.askPriceE9()), q.askSize())));
        return out.toString();
    }

    private static double price(final long e9) {
        return e9 * Math.pow(10, MarketDataCodecs.PRICE_EXPONENT);
    }
}
