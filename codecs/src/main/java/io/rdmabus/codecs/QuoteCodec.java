package io.rdmabus.codecs;

import io.rdmabus.codecs.sbe.md.QuoteDecoder;
import io.rdmabus.codecs.sbe.md.QuoteEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** {@link Quote} as SBE message {@code Quote}. */
final class QuoteCodec extends SbeMessageCodec<Quote> {
    static final QuoteCodec INSTANCE = new QuoteCodec();

    private QuoteCodec() {
        super("sbe-md-quote", "Quote", QuoteEncoder.TEMPLATE_ID, QuoteEncoder.BLOCK_LENGTH);
    }

    @Override
    void encodeMessage(final Quote value, final SbeFlyweights flyweights, final MutableDirectBuffer buffer, final int offset) {
        final QuoteEncoder encoder = flyweights.quoteEncoder.wrapAndApplyHeader(buffer, offset, flyweights.headerEncoder);
        encoder.instrumentId(value.instrumentId()).exchangeTimestampNs(value.exchangeTimestampNs());
        encoder.bidPrice().mantissa(value.bidPriceE9());
        encoder.askPrice().mantissa(value.askPriceE9());
        encoder.bidSize(value.bidSize()).askSize(value.askSize()).feedSequence(value.feedSequence());
    }

    @Override
    Quote decodeBody(final String codecName, final SbeFlyweights flyweights, final DirectBuffer buffer, final int bodyOffset) {
        final QuoteDecoder decoder =
            flyweights.quoteDecoder.wrap(buffer, bodyOffset, QuoteDecoder.BLOCK_LENGTH, QuoteDecoder.SCHEMA_VERSION);
        return new Quote(
            decoder.instrumentId(),
            decoder.exchangeTimestampNs(),
            decoder.bidPrice().mantissa(),
            decoder.askPrice().mantissa(),
            decoder.bidSize(),
            decoder.askSize(),
            decoder.feedSequence());
    }
}
