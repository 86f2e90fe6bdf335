package io.rdmabus.codecs;

import io.rdmabus.codec.Codec;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** Any {@link MarketDataEvent}: encodes by runtime type, decodes by the header's template id. */
final class AnyMarketDataCodec implements Codec<MarketDataEvent> {
    static final AnyMarketDataCodec INSTANCE = new AnyMarketDataCodec();
    private static final String NAME = "sbe-md-any";

    private AnyMarketDataCodec() {
    }

    @Override
    public int encodedLength(final MarketDataEvent value) {
        return codecFor(value).messageLength();
    }

    @Override
    public void encode(final MarketDataEvent value, final MutableDirectBuffer buffer, final int offset) {
        switch (value) {
            case Quote quote -> QuoteCodec.INSTANCE.encode(quote, buffer, offset);
            case Trade trade -> TradeCodec.INSTANCE.encode(trade, buffer, offset);
            case BookLevelUpdate update -> BookLevelUpdateCodec.INSTANCE.encode(update, buffer, offset);
            case null -> throw new NullPointerException(NAME + ": cannot encode null");
        }
    }

    @Override
    public MarketDataEvent decode(final DirectBuffer buffer, final int offset, final int length) {
        Bounds.checkDecodeRange(NAME, buffer, offset, length);
        final SbeFlyweights flyweights = SbeFlyweights.get();
        try {
            final int templateId = SbeMessageCodec.readCheckedHeader(NAME, flyweights.headerDecoder, buffer, offset, length);
            final SbeMessageCodec<?> codec = MarketDataCodecs.codecForTemplate(templateId);
            if (codec == null) {
                throw SbeMessageCodec.unknownTemplate(NAME, templateId);
            }
            return codec.decodeChecked(NAME, flyweights, buffer, offset, length);
        } finally {
            flyweights.releaseDecoders();
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    private static SbeMessageCodec<?> codecFor(final MarketDataEvent value) {
        return switch (value) {
            case Quote ignored -> QuoteCodec.INSTANCE;
            case Trade ignored -> TradeCodec.INSTANCE;
            case BookLevelUpdate ignored -> BookLevelUpdateCodec.INSTANCE;
            case null -> throw new NullPointerException(NAME + ": cannot encode null");
        };
    }
}
