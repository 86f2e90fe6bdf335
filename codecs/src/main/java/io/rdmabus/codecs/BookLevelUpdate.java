package io.rdmabus.codecs;

import java.util.Objects;

/**
 * Incremental update of one price level (SBE template {@value MarketDataCodecs#BOOK_LEVEL_UPDATE_TEMPLATE_ID}).
 *
 * @param instrumentId        the instrument
 * @param exchangeTimestampNs exchange timestamp, nanoseconds since the Unix epoch
 * @param side                book side, never {@code null}
 * @param levelIndex          level in the book, 0 = top, at most {@value MarketDataCodecs#MAX_LEVEL_INDEX}
 * @param priceE9             price of the level times 10^9
 * @param size                quantity at the level after the update, in instrument units
 * @param action              what happened to the level, never {@code null}
 */
public record BookLevelUpdate(
    long instrumentId,
    long exchangeTimestampNs,
    BookSide side,
    int levelIndex,
    long priceE9,
    long size,
    BookAction action) implements MarketDataEvent {

    /** Rejects values the wire format cannot carry, so that encoding a constructed value cannot fail. */
    public BookLevelUpdate {
        Objects.requireNonNull(side, "BookLevelUpdate.side must not be null");
        Objects.requireNonNull(action, "BookLevelUpdate.action must not be null");
        if (levelIndex < 0 || levelIndex > MarketDataCodecs.MAX_LEVEL_INDEX) {
            throw new IllegalArgumentException("BookLevelUpdate.levelIndex must be in [0, " + MarketDataCodecs.MAX_LEVEL_INDEX
                + "] (uint16 on the wire, 65535 is reserved), got " + levelIndex);
        }
    }
}
