package io.rdmabus.codecs;

/** Side of the order that took liquidity in a {@link Trade}. */
public enum AggressorSide {
    /** A buy order lifted the offer. */
    BUY,
    /** A sell order hit the bid. */
    SELL
}
