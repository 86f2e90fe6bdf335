package io.rdmabus.codecs;

import io.rdmabus.codec.Codec;
import io.rdmabus.codecs.sbe.md.BookLevelUpdateEncoder;
import io.rdmabus.codecs.sbe.md.MessageHeaderEncoder;
import io.rdmabus.codecs.sbe.md.QuoteEncoder;
import io.rdmabus.codecs.sbe.md.TradeEncoder;

/**
 * Codecs for the rdma-bus market data SBE schema ({@code sbe/market-data.xml} on the classpath). The Java flyweights
 * behind them are generated from that schema at build time.
 *
 * <p>Every message is an 8-byte SBE header followed by a fixed-size block, so each message type has one exact
 * length. Decoding validates, in order: the range lies in the buffer; at least a header's worth of bytes; schema id
 * and version equal {@link #SCHEMA_ID} and {@link #SCHEMA_VERSION}; the template id is known (and, for the typed
 * codecs, is the expected one); the header's block length is the one of this version; the given length is exactly
 * header plus block; enum fields hold a declared value. Any failure is a {@link io.rdmabus.codec.CodecException}
 * naming what was expected and what was found. Encoding writes exactly {@code encodedLength} bytes.
 *
 * <p>All codecs are stateless singletons, safe to share across threads; they allocate only the decoded value.
 */
public final class MarketDataCodecs {
    /** SBE schema id of {@code sbe/market-data.xml}. */
    public static final int SCHEMA_ID = MessageHeaderEncoder.SCHEMA_ID;
    /** SBE schema version this build encodes and the only one it decodes. */
    public static final int SCHEMA_VERSION = MessageHeaderEncoder.SCHEMA_VERSION;
    /** Decimal exponent of every price: a {@code ...PriceE9} field holds {@code price * 10^9}. */
    public static final int PRICE_EXPONENT = -9;
    /** Largest {@link BookLevelUpdate#levelIndex()}: the field is a uint16 whose top value is the SBE null value. */
    public static final int MAX_LEVEL_INDEX = 65534;

    /** Template id of {@link Quote}. */
    public static final int QUOTE_TEMPLATE_ID = QuoteEncoder.TEMPLATE_ID;
    /** Template id of {@link Trade}. */
    public static final int TRADE_TEMPLATE_ID = TradeEncoder.TEMPLATE_ID;
    /** Template id of {@link BookLevelUpdate}. */
    public static final int BOOK_LEVEL_UPDATE_TEMPLATE_ID = BookLevelUpdateEncoder.TEMPLATE_ID;

    /** Encoded size of a {@link Quote} in bytes, header included. */
    public static final int QUOTE_LENGTH = MessageHeaderEncoder.ENCODED_LENGTH + QuoteEncoder.BLOCK_LENGTH;
    /** Encoded size of a {@link Trade} in bytes, header included. */
    public static final int TRADE_LENGTH = MessageHeaderEncoder.ENCODED_LENGTH + TradeEncoder.BLOCK_LENGTH;
    /** Encoded size of a {@link BookLevelUpdate} in bytes, header included. */
    public static final int BOOK_LEVEL_UPDATE_LENGTH =
        MessageHeaderEncoder.ENCODED_LENGTH + BookLevelUpdateEncoder.BLOCK_LENGTH;

    private MarketDataCodecs() {
    }

    /** @return the codec for {@link Quote}; decoding any other template id fails */
    public static Codec<Quote> quote() {
        return QuoteCodec.INSTANCE;
    }

    /** @return the codec for {@link Trade}; decoding any other template id fails */
    public static Codec<Trade> trade() {
        return TradeCodec.INSTANCE;
    }

    /** @return the codec for {@link BookLevelUpdate}; decoding any other template id fails */
    public static Codec<BookLevelUpdate> bookLevelUpdate() {
        return BookLevelUpdateCodec.INSTANCE;
    }

    /** @return a codec for a topic carrying several message types: decodes by template id into the sealed type */
    public static Codec<MarketDataEvent> any() {
        return AnyMarketDataCodec.INSTANCE;
    }

    /** @return the typed codec for a template id of this schema, or {@code null} if the id is unknown */
    static SbeMessageCodec<?> codecForTemplate(final int templateId) {
        return switch (templateId) {
            case QuoteEncoder.TEMPLATE_ID -> QuoteCodec.INSTANCE;
            case TradeEncoder.TEMPLATE_ID -> TradeCodec.INSTANCE;
            case BookLevelUpdateEncoder.TEMPLATE_ID -> BookLevelUpdateCodec.INSTANCE;
            default -> null;
        };
    }
}
