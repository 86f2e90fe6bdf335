package io.rdmabus.soak;

import io.rdmabus.codecs.AggressorSide;
import io.rdmabus.codecs.Quote;
import io.rdmabus.codecs.Trade;

/**
 * The soak workload's messages: the market-data sample's {@link Quote} (best effort) and {@link Trade} (reliable), each
 * carrying the publisher's per-topic sequence ({@code feedSequence} / {@code tradeId}) and fields derived from it, one of
 * which is a checksum over the others ({@code askSize} / {@code size}), so a subscriber can prove what it got.
 * {@code exchangeTimestampNs} is the publisher's wall clock at send (latency across guests includes their clock skew).
 */
public final class SoakMessages {
    private static final int INSTRUMENTS = 8;

    private SoakMessages() {
    }

    static long mix(final long v) {
        long x = v;
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        x *= 0xc4ceb9fe1a85ec53L;
        x ^= x >>> 33;
        return x;
    }

    /** @param seq sequence @param nowNs wall clock ns @return the quote with that sequence */
    public static Quote quote(final long seq, final long nowNs) {
        final long instrument = seq % INSTRUMENTS + 1;
        final long bid = 100_000_000_000L + (mix(seq) & 0xFFFFF);
        final long ask = bid + 1_000_000L;
        final long bidSize = mix(seq ^ 0x5A) >>> 44;
        return new Quote(instrument, nowNs, bid, ask, bidSize, checksum(seq, instrument, bid, bidSize), seq);
    }

    /** @param seq sequence @param nowNs wall clock ns @return the trade with that sequence */
    public static Trade trade(final long seq, final long nowNs) {
        final long instrument = seq % INSTRUMENTS + 1;
        final long price = 100_000_000_000L + (mix(~seq) & 0xFFFFF);
        return new Trade(instrument, nowNs, price, checksum(seq, instrument, price, 7), seq, seq % 2 == 0 ? AggressorSide.BUY : AggressorSide.SELL);
    }

    private static long checksum(final long seq, final long a, final long b, final long c) {
        return mix(seq * 31 + a * 17 + b * 7 + c) >>> 40;
    }

    /** @param q a received quote @return true if every field matches what its sequence says */
    public static boolean verify(final Quote q) {
        return q.feedSequence() >= 0 && q.equals(quote(q.feedSequence(), q.exchangeTimestampNs()));
    }

    /** @param t a received trade @return true if every field matches what its sequence says */
    public static boolean verify(final Trade t) {
        return t.tradeId() >= 0 && t.equals(trade(t.tradeId(), t.exchangeTimestampNs()));
    }
}
