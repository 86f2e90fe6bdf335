package io.rdmabus.codecs;

import java.util.Objects;

/**
 * One execution (SBE template {@value MarketDataCodecs#TRADE_TEMPLATE_ID}).
 *
 * @param instrumentId        the instrument
 * @param exchangeTimestampNs exchange timestamp, nanoseconds since the Unix epoch
 * @param priceE9             execution price times 10^9
 * @param size                executed quantity, in instrument units
 * @param tradeId             the venue's trade identifier
 * @param aggressorSide       side of the order that took liquidity, never {@code null}
 */
public record Trade(
    long instrumentId,
    long exchangeTimestampNs,
    long priceE9,
    long size,
    long tradeId,
    AggressorSide aggressorSide) implements MarketDataEvent {

    /** Rejects a null side: the wire format has no "unknown side" value. */
    public Trade {
        Objects.requireNonNull(aggressorSide, "Trade.aggressorSide must not be null");
    }
}
