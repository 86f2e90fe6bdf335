package io.rdmabus.codecs;

/**
 * Top of book for one instrument (SBE template {@value MarketDataCodecs#QUOTE_TEMPLATE_ID}).
 *
 * @param instrumentId        the instrument
 * @param exchangeTimestampNs exchange timestamp, nanoseconds since the Unix epoch
 * @param bidPriceE9          best bid price times 10^9
 * @param askPriceE9          best ask price times 10^9
 * @param bidSize             quantity at the best bid, in instrument units
 * @param askSize             quantity at the best ask, in instrument units
 * @param feedSequence        sequence number of this message in its originating feed
 */
public record Quote(
    long instrumentId,
    long exchangeTimestampNs,
    long bidPriceE9,
    long askPriceE9,
    long bidSize,
    long askSize,
    long feedSequence) implements MarketDataEvent {
}
