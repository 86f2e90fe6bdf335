package io.rdmabus.codecs;

/** Side of the order book that a {@link BookLevelUpdate} changes. */
public enum BookSide {
    /** Buy orders. */
    BID,
    /** Sell orders. */
    ASK
}
