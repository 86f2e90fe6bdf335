package io.rdmabus.codecs;

import io.rdmabus.codec.Codec;
import io.rdmabus.codec.CodecException;
import io.rdmabus.codecs.sbe.md.MessageHeaderDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Common framing for one SBE message type: header validation, exact length checks, and the encode/decode entry
 * points. Subclasses only move fields between the value type and the generated flyweights.
 *
 * @param <T> the value type
 */
abstract sealed class SbeMessageCodec<T extends MarketDataEvent> implements Codec<T>
    permits QuoteCodec, TradeCodec, BookLevelUpdateCodec {

    static final int HEADER_LENGTH = MessageHeaderDecoder.ENCODED_LENGTH;

    private final String name;
    private final String messageName;
    private final int templateId;
    private final int blockLength;

    SbeMessageCodec(final String name, final String messageName, final int templateId, final int blockLength) {
        this.name = name;
        this.messageName = messageName;
        this.templateId = templateId;
        this.blockLength = blockLength;
    }

    final String messageName() {
        return messageName;
    }

    final int templateId() {
        return templateId;
    }

    /** @return header plus block: every message of this schema version has exactly this size */
    final int messageLength() {
        return HEADER_LENGTH + blockLength;
    }

    @Override
    public final int encodedLength(final T value) {
        Bounds.requireValue(name, value, "");
        return messageLength();
    }

    @Override
    public final void encode(final T value, final MutableDirectBuffer buffer, final int offset) {
        Bounds.requireValue(name, value, "");
        Bounds.checkEncodeRange(name, buffer, offset, messageLength());
        encodeMessage(value, SbeFlyweights.get(), buffer, offset);
    }

    @Override
    public final T decode(final DirectBuffer buffer, final int offset, final int length) {
        Bounds.checkDecodeRange(name, buffer, offset, length);
        final SbeFlyweights flyweights = SbeFlyweights.get();
        try {
            final int actualTemplateId = readCheckedHeader(name, flyweights.headerDecoder, buffer, offset, length);
            if (actualTemplateId != templateId) {
                final SbeMessageCodec<?> actual = MarketDataCodecs.codecForTemplate(actualTemplateId);
                if (actual == null) {
                    throw unknownTemplate(name, actualTemplateId);
                }
                throw new CodecException(name + ": got a " + actual.messageName + " (template id " + actualTemplateId
                    + ") where a " + messageName + " (template id " + templateId
                    + ") was expected; use MarketDataCodecs.any() for a topic that carries several message types");
            }
            return decodeChecked(name, flyweights, buffer, offset, length);
        } finally {
            flyweights.releaseDecoders();
        }
    }

    @Override
    public final String name() {
        return name;
    }

    /**
     * Decodes after the header was validated and the template id matched: checks the block length and the exact
     * total length, then reads the body.
     */
    final T decodeChecked(
        final String codecName, final SbeFlyweights flyweights, final DirectBuffer buffer, final int offset,
        final int length) {
        final int actualBlockLength = flyweights.headerDecoder.blockLength();
        if (actualBlockLength != blockLength) {
            throw new CodecException(codecName + ": " + messageName + " has blockLength " + actualBlockLength
                + " where " + blockLength + " was expected for schema version " + MarketDataCodecs.SCHEMA_VERSION);
        }
        if (length < messageLength()) {
            throw new CodecException(codecName + ": truncated " + messageName + ": needed " + messageLength()
                + " bytes (" + HEADER_LENGTH + " header + " + blockLength + " block), given " + length);
        }
        if (length > messageLength()) {
            throw new CodecException(codecName + ": " + messageName + " is " + messageLength() + " bytes, given "
                + length + " (" + (length - messageLength()) + " trailing bytes)");
        }
        return decodeBody(codecName, flyweights, buffer, offset + HEADER_LENGTH);
    }

    /** Writes header and body at {@code offset}; the range was checked. */
    abstract void encodeMessage(T value, SbeFlyweights flyweights, MutableDirectBuffer buffer, int offset);

    /** Reads the body at {@code bodyOffset}; header and lengths were checked. Enum values are checked here. */
    abstract T decodeBody(String codecName, SbeFlyweights flyweights, DirectBuffer buffer, int bodyOffset);

    /**
     * Wraps the header and checks its length, schema id and version.
     *
     * @return the template id, not yet checked
     */
    static int readCheckedHeader(
        final String codecName, final MessageHeaderDecoder header, final DirectBuffer buffer, final int offset,
        final int length) {
        if (length < HEADER_LENGTH) {
            throw new CodecException(codecName + ": truncated: needed at least " + HEADER_LENGTH
                + " bytes for the SBE message header, given " + length);
        }
        header.wrap(buffer, offset);
        final int schemaId = header.schemaId();
        if (schemaId != MarketDataCodecs.SCHEMA_ID) {
            throw new CodecException(codecName + ": schema id " + schemaId + " where " + MarketDataCodecs.SCHEMA_ID
                + " (rdma-bus market data) was expected: the payload was not encoded with this schema");
        }
        final int version = header.version();
        if (version != MarketDataCodecs.SCHEMA_VERSION) {
            throw new CodecException(codecName + ": schema version " + version + " where "
                + MarketDataCodecs.SCHEMA_VERSION + " was expected: publisher and subscriber use different versions "
                + "of sbe/market-data.xml");
        }
        return header.templateId();
    }

    static CodecException unknownTemplate(final String codecName, final int templateId) {
        return new CodecException(codecName + ": unknown template id " + templateId + " in schema "
            + MarketDataCodecs.SCHEMA_ID + " version " + MarketDataCodecs.SCHEMA_VERSION + " (known: "
            + MarketDataCodecs.QUOTE_TEMPLATE_ID + "=Quote, " + MarketDataCodecs.TRADE_TEMPLATE_ID + "=Trade, "
            + MarketDataCodecs.BOOK_LEVEL_UPDATE_TEMPLATE_ID + "=BookLevelUpdate)");
    }

    /** Error for an enum field whose raw value is the SBE null value or not a declared value. */
    static CodecException badEnum(
        final String codecName, final String field, final short raw, final short nullValue, final String valid) {
        final String what = raw == nullValue ? raw + " (the SBE null value)" : String.valueOf(raw);
        return new CodecException(codecName + ": " + field + " has invalid value " + what + "; valid: " + valid);
    }
}
