package io.rdmabus.samples.marketdata;

import io.rdmabus.Delivery;
import io.rdmabus.Topic;
import io.rdmabus.codecs.MarketDataCodecs;
import io.rdmabus.codecs.Quote;
import io.rdmabus.codecs.Trade;

/** The sample's topics: ticks (quotes) are best effort, trades are reliable. */
public final class MarketDataTopics {
    /** Top-of-book quotes: best effort, a missed tick is superseded by the next one. */
    public static final Topic<Quote> QUOTES = Topic.of("md.quotes", MarketDataCodecs.quote(), Delivery.BEST_EFFORT);
    /**
     * The same quote stream with a last-value cache per instrument: the feed publishes on it (so its publication keeps the
     * last quote of every instrument), and a subscriber that subscribes this topic joins late: the late order book gets
     * every instrument's last quote at once, then the live stream. Subscribers of {@link #QUOTES} get the live stream only.
     */
    public static final Topic<Quote> QUOTES_LAST_VALUES = QUOTES.withLastValueCache(Quote::instrumentId, 100_000);
    /** Trades: reliable, every execution counts. */
    public static final Topic<Trade> TRADES = Topic.of("md.trades", MarketDataCodecs.trade(), Delivery.RELIABLE);
    /**
     * Trade id of the warm-up trades the feed sends until every subscriber has seen one (so that no subscriber
     * misses the start of the reliable stream); subscribers skip them.
     */
    public static final long WARM_UP_TRADE_ID = -1;

    private MarketDataTopics() {
    }
}
