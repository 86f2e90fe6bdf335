package io.rdmabus.codecs;

import io.rdmabus.codec.CodecException;
import io.rdmabus.codecs.sbe.md.BookLevelUpdateDecoder;
import io.rdmabus.codecs.sbe.md.BookLevelUpdateEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** {@link BookLevelUpdate} as SBE message {@code BookLevelUpdate}. */
final class BookLevelUpdateCodec extends SbeMessageCodec<BookLevelUpdate> {
    static final BookLevelUpdateCodec INSTANCE = new BookLevelUpdateCodec();

    private BookLevelUpdateCodec() {
        super("sbe-md-book-level-update", "BookLevelUpdate",
            BookLevelUpdateEncoder.TEMPLATE_ID, BookLevelUpdateEncoder.BLOCK_LENGTH);
    }

    @Override
    void encodeMessage(
        final BookLevelUpdate value, final SbeFlyweights flyweights, final MutableDirectBuffer buffer, final int offset) {
        final BookLevelUpdateEncoder encoder =
            flyweights.bookLevelUpdateEncoder.wrapAndApplyHeader(buffer, offset, flyweights.headerEncoder);
        encoder.instrumentId(value.instrumentId()).exchangeTimestampNs(value.exchangeTimestampNs());
        encoder.price().mantissa(value.priceE9());
        encoder.size(value.size())
            .levelIndex(value.levelIndex())
            .side(SbeEnums.toSbe(value.side()))
            .action(SbeEnums.toSbe(value.action()));
    }

    @Override
    BookLevelUpdate decodeBody(
        final String codecName, final SbeFlyweights flyweights, final DirectBuffer buffer, final int bodyOffset) {
        final BookLevelUpdateDecoder decoder = flyweights.bookLevelUpdateDecoder.wrap(
            buffer, bodyOffset, BookLevelUpdateDecoder.BLOCK_LENGTH, BookLevelUpdateDecoder.SCHEMA_VERSION);
        final int levelIndex = decoder.levelIndex();
        if (levelIndex > MarketDataCodecs.MAX_LEVEL_INDEX) {
            throw new CodecException(codecName + ": BookLevelUpdate.levelIndex has invalid value " + levelIndex
                + " (the uint16 null value); valid: 0.." + MarketDataCodecs.MAX_LEVEL_INDEX);
        }
        final BookSide side = SbeEnums.bookSide(codecName, decoder.sideRaw());
        final BookAction action = SbeEnums.bookAction(codecName, decoder.actionRaw());
        return new BookLevelUpdate(
            decoder.instrumentId(),
            decoder.exchangeTimestampNs(),
            side,
            levelIndex,
            decoder.price().mantissa(),
            decoder.size(),
            action);
    }
}
