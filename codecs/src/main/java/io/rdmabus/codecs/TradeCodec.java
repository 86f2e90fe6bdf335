package io.rdmabus.codecs;

import io.rdmabus.codecs.sbe.md.TradeDecoder;
import io.rdmabus.codecs.sbe.md.TradeEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** {@link Trade} as SBE message {@code Trade}. */
final class TradeCodec extends SbeMessageCodec<Trade> {
    static final TradeCodec INSTANCE = new TradeCodec();

    private TradeCodec() {
        super("sbe-md-trade", "Trade", TradeEncoder.TEMPLATE_ID, TradeEncoder.BLOCK_LENGTH);
    }

    @Override
    void encodeMessage(final Trade value, final SbeFlyweights flyweights, final MutableDirectBuffer buffer, final int offset) {
        final TradeEncoder encoder = flyweights.tradeEncoder.wrapAndApplyHeader(buffer, offset, flyweights.headerEncoder);
        encoder.instrumentId(value.instrumentId()).exchangeTimestampNs(value.exchangeTimestampNs());
        encoder.price().mantissa(value.priceE9());
        encoder.size(value.size()).tradeId(value.tradeId()).aggressorSide(SbeEnums.toSbe(value.aggressorSide()));
    }

    @Override
    Trade decodeBody(final String codecName, final SbeFlyweights flyweights, final DirectBuffer buffer, final int bodyOffset) {
        final TradeDecoder decoder =
            flyweights.tradeDecoder.wrap(buffer, bodyOffset, TradeDecoder.BLOCK_LENGTH, TradeDecoder.SCHEMA_VERSION);
        return new Trade(
            decoder.instrumentId(),
            decoder.exchangeTimestampNs(),
            decoder.price().mantissa(),
            decoder.size(),
            decoder.tradeId(),
            SbeEnums.aggressorSide(codecName, decoder.aggressorSideRaw()));
    }
}
