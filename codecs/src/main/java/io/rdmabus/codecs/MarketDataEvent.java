package io.rdmabus.codecs;

/**
 * A market data message of the rdma-bus SBE schema ({@code sbe/market-data.xml}); decode any of them with
 * {@link MarketDataCodecs#any()} and switch over the permitted types.
 *
 * <p>Prices are fixed-point with exponent {@link MarketDataCodecs#PRICE_EXPONENT}: a field named {@code ...PriceE9}
 * holds {@code price * 10^9}, e.g. {@code 101.25} is {@code 101_250_000_000L}.
 */
public sealed interface MarketDataEvent permits Quote, Trade, BookLevelUpdate {
    /** @return the instrument the event is about */
    long instrumentId();

    /** @return the exchange's timestamp of the event, nanoseconds since the Unix epoch */
    long exchangeTimestampNs();
}
