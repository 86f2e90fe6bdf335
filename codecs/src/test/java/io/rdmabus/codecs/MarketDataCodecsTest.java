package io.rdmabus.codecs;

import static io.rdmabus.codecs.CodecAssertions.assertDecodeFails;
import static io.rdmabus.codecs.CodecAssertions.assertRoundTrip;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.codec.Codec;
import io.rdmabus.codec.CodecException;
import io.rdmabus.codecs.sbe.md.BookLevelUpdateDecoder;
import io.rdmabus.codecs.sbe.md.Decimal9Decoder;
import io.rdmabus.codecs.sbe.md.MessageHeaderDecoder;
import io.rdmabus.codecs.sbe.md.TradeDecoder;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MarketDataCodecsTest {
    private static final int HEADER = MessageHeaderDecoder.ENCODED_LENGTH;
    private static final int BLOCK_LENGTH_OFFSET = 0;
    private static final int TEMPLATE_ID_OFFSET = 2;
    private static final int SCHEMA_ID_OFFSET = 4;
    private static final int VERSION_OFFSET = 6;

    static final Quote QUOTE = new Quote(42L, 1_700_000_000_123_456_789L, 101_250_000_000L, 101_260_000_000L, 500, 700, 9_001);
    static final Trade TRADE = new Trade(43L, 1_700_000_000_000_000_001L, 99_000_000_001L, 3, 777_777L, AggressorSide.SELL);
    static final BookLevelUpdate BOOK =
        new BookLevelUpdate(44L, 1_700_000_000_000_000_002L, BookSide.ASK, 3, 100_500_000_000L, 1_000, BookAction.CHANGE);

    private static byte[] encode(final MarketDataEvent event) {
        final Codec<MarketDataEvent> any = MarketDataCodecs.any();
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[any.encodedLength(event)]);
        any.encode(event, buffer, 0);
        return buffer.byteArray();
    }

    private static byte[] withShort(final byte[] message, final int index, final int value) {
        final byte[] copy = message.clone();
        new UnsafeBuffer(copy).putShort(index, (short) value, ByteOrder.LITTLE_ENDIAN);
        return copy;
    }

    private static byte[] withByte(final byte[] message, final int index, final int value) {
        final byte[] copy = message.clone();
        copy[index] = (byte) value;
        return copy;
    }

    @SuppressWarnings("unchecked")
    private static Codec<MarketDataEvent> typedCodecFor(final MarketDataEvent event) {
        final Codec<?> codec = switch (event) {
            case Quote ignored -> MarketDataCodecs.quote();
            case Trade ignored -> MarketDataCodecs.trade();
            case BookLevelUpdate ignored -> MarketDataCodecs.bookLevelUpdate();
        };
        return (Codec<MarketDataEvent>) codec;
    }

    private static void assertContains(final String message, final String... parts) {
        for (final String part : parts) {
            assertTrue(message.contains(part), "expected \"" + part + "\" in: " + message);
        }
    }

    @Test
    void typedCodecsRoundTrip() {
        assertEquals(64, assertRoundTrip(MarketDataCodecs.quote(), QUOTE).length);
        assertEquals(49, assertRoundTrip(MarketDataCodecs.trade(), TRADE).length);
        assertEquals(44, assertRoundTrip(MarketDataCodecs.bookLevelUpdate(), BOOK).length);
        assertEquals(MarketDataCodecs.QUOTE_LENGTH, MarketDataCodecs.quote().encodedLength(QUOTE));
        assertEquals(MarketDataCodecs.TRADE_LENGTH, MarketDataCodecs.trade().encodedLength(TRADE));
        assertEquals(MarketDataCodecs.BOOK_LEVEL_UPDATE_LENGTH, MarketDataCodecs.bookLevelUpdate().encodedLength(BOOK));
    }

    @Test
    void extremeValuesRoundTrip() {
        for (final long v : new long[] {Long.MIN_VALUE, Long.MAX_VALUE, 0L, -1L, 1L}) {
            assertRoundTrip(MarketDataCodecs.quote(), new Quote(v, v, v, v, v, v, v));
            for (final AggressorSide side : AggressorSide.values()) {
                assertRoundTrip(MarketDataCodecs.trade(), new Trade(v, v, v, v, v, side));
            }
            for (final BookSide side : BookSide.values()) {
                for (final BookAction action : BookAction.values()) {
                    for (final int level : new int[] {0, 1, MarketDataCodecs.MAX_LEVEL_INDEX}) {
                        assertRoundTrip(MarketDataCodecs.bookLevelUpdate(), new BookLevelUpdate(v, v, side, level, v, v, action));
                    }
                }
            }
        }
    }

    @Test
    void anyCodecRoundTripsEveryTypeAndMatchesTheTypedEncoding() {
        for (final MarketDataEvent event : List.of(QUOTE, TRADE, BOOK)) {
            final byte[] viaAny = assertRoundTrip(MarketDataCodecs.any(), event);
            final byte[] viaTyped = assertRoundTrip(typedCodecFor(event), event);
            assertEquals(new UnsafeBuffer(viaTyped), new UnsafeBuffer(viaAny), "same bytes either way");
            final MarketDataEvent decoded = MarketDataCodecs.any().decode(new UnsafeBuffer(viaTyped), 0, viaTyped.length);
            assertInstanceOf(event.getClass(), decoded);
        }
    }

    @Test
    void wireLayoutIsLittleEndianSbeWithTheDocumentedHeader() {
        final UnsafeBuffer wire = new UnsafeBuffer(encode(TRADE));
        assertEquals(TradeDecoder.BLOCK_LENGTH, wire.getShort(BLOCK_LENGTH_OFFSET, ByteOrder.LITTLE_ENDIAN));
        assertEquals(MarketDataCodecs.TRADE_TEMPLATE_ID, wire.getShort(TEMPLATE_ID_OFFSET, ByteOrder.LITTLE_ENDIAN));
        assertEquals(7101, wire.getShort(SCHEMA_ID_OFFSET, ByteOrder.LITTLE_ENDIAN));
        assertEquals(1, wire.getShort(VERSION_OFFSET, ByteOrder.LITTLE_ENDIAN));
        assertEquals(43L, wire.getLong(HEADER, ByteOrder.LITTLE_ENDIAN));
        assertEquals(99_000_000_001L, wire.getLong(HEADER + TradeDecoder.priceEncodingOffset(), ByteOrder.LITTLE_ENDIAN));
        assertEquals(2, wire.getByte(HEADER + TradeDecoder.aggressorSideEncodingOffset()), "SELL is 2 on the wire");
    }

    @Test
    void constantsMatchTheGeneratedSchema() {
        assertEquals(new Decimal9Decoder().exponent(), MarketDataCodecs.PRICE_EXPONENT);
        assertEquals(BookLevelUpdateDecoder.levelIndexMaxValue(), MarketDataCodecs.MAX_LEVEL_INDEX);
        assertEquals(7101, MarketDataCodecs.SCHEMA_ID);
        assertEquals(1, MarketDataCodecs.SCHEMA_VERSION);
    }

    @Test
    void theSchemaShipsOnTheClassPathForOtherSbeConsumers() throws java.io.IOException {
        try (java.io.InputStream in = MarketDataCodecs.class.getResourceAsStream("/sbe/market-data.xml")) {
            assertTrue(in != null, "sbe/market-data.xml is not on the class path");
            final String schema = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertContains(schema, "id=\"" + MarketDataCodecs.SCHEMA_ID + "\"", "version=\"" + MarketDataCodecs.SCHEMA_VERSION + "\"");
        }
    }

    @Test
    void everyTruncationIsACodecExceptionSayingWhatWasNeeded() {
        for (final MarketDataEvent event : List.of(QUOTE, TRADE, BOOK)) {
            final byte[] wire = encode(event);
            for (final Codec<MarketDataEvent> codec : List.of(typedCodecFor(event), MarketDataCodecs.any())) {
                for (int length = 0; length < wire.length; length++) {
                    final String message = assertDecodeFails(codec, wire, length);
                    if (length < HEADER) {
                        assertContains(message, "truncated", "needed at least 8 bytes", "given " + length);
                    } else {
                        assertContains(message, "truncated " + event.getClass().getSimpleName(),
                            "needed " + wire.length + " bytes", "given " + length);
                    }
                }
            }
        }
    }

    @Test
    void trailingBytesAreRejected() {
        final byte[] wire = encode(QUOTE);
        final byte[] longer = java.util.Arrays.copyOf(wire, wire.length + 3);
        assertContains(assertDecodeFails(MarketDataCodecs.quote(), longer), "given 67", "3 trailing bytes");
        assertContains(assertDecodeFails(MarketDataCodecs.any(), longer), "3 trailing bytes");
    }

    @Test
    void wrongSchemaIdOrVersionNamesExpectedAndActual() {
        for (final MarketDataEvent event : List.of(QUOTE, TRADE, BOOK)) {
            final byte[] wire = encode(event);
            for (final Codec<MarketDataEvent> codec : List.of(typedCodecFor(event), MarketDataCodecs.any())) {
                assertContains(assertDecodeFails(codec, withShort(wire, SCHEMA_ID_OFFSET, 7102)),
                    codec.name(), "schema id 7102", "7101");
                assertContains(assertDecodeFails(codec, withShort(wire, SCHEMA_ID_OFFSET, 0)), "schema id 0");
                assertContains(assertDecodeFails(codec, withShort(wire, VERSION_OFFSET, 2)),
                    "schema version 2", "where 1 was expected");
                assertContains(assertDecodeFails(codec, withShort(wire, VERSION_OFFSET, 0)), "schema version 0");
            }
        }
    }

    @Test
    void unknownOrUnexpectedTemplateIdIsRejected() {
        final byte[] quote = encode(QUOTE);
        for (final int bad : new int[] {0, 4, 0xFFFF}) {
            for (final Codec<?> codec : List.of(MarketDataCodecs.quote(), MarketDataCodecs.any())) {
                assertContains(assertDecodeFails(codec, withShort(quote, TEMPLATE_ID_OFFSET, bad)),
                    "unknown template id " + bad, "1=Quote, 2=Trade, 3=BookLevelUpdate");
            }
        }
        assertContains(assertDecodeFails(MarketDataCodecs.trade(), quote),
            "got a Quote (template id 1)", "a Trade (template id 2) was expected", "MarketDataCodecs.any()");
        assertContains(assertDecodeFails(MarketDataCodecs.quote(), encode(BOOK)), "got a BookLevelUpdate");
        assertContains(assertDecodeFails(MarketDataCodecs.bookLevelUpdate(), encode(TRADE)), "got a Trade");
    }

    @Test
    void wrongBlockLengthIsRejected() {
        final byte[] trade = encode(TRADE);
        for (final int bad : new int[] {0, TradeDecoder.BLOCK_LENGTH - 1, TradeDecoder.BLOCK_LENGTH + 1, 0xFFFF}) {
            assertContains(assertDecodeFails(MarketDataCodecs.trade(), withShort(trade, BLOCK_LENGTH_OFFSET, bad)),
                "Trade has blockLength " + bad, "where " + TradeDecoder.BLOCK_LENGTH + " was expected");
            assertDecodeFails(MarketDataCodecs.any(), withShort(trade, BLOCK_LENGTH_OFFSET, bad));
        }
    }

    @Test
    void invalidEnumValuesAreRejected() {
        final int sideIndex = HEADER + TradeDecoder.aggressorSideEncodingOffset();
        final byte[] trade = encode(TRADE);
        for (final int bad : new int[] {0, 3, 0x7F, 0xFF}) {
            for (final Codec<?> codec : List.of(MarketDataCodecs.trade(), MarketDataCodecs.any())) {
                assertContains(assertDecodeFails(codec, withByte(trade, sideIndex, bad)),
                    "Trade.aggressorSide has invalid value " + bad, "1=BUY, 2=SELL");
            }
        }
        assertContains(assertDecodeFails(MarketDataCodecs.trade(), withByte(trade, sideIndex, 0xFF)), "SBE null value");

        final byte[] book = encode(BOOK);
        final int bookSideIndex = HEADER + BookLevelUpdateDecoder.sideEncodingOffset();
        final int actionIndex = HEADER + BookLevelUpdateDecoder.actionEncodingOffset();
        final int levelIndex = HEADER + BookLevelUpdateDecoder.levelIndexEncodingOffset();
        for (final Codec<?> codec : List.of(MarketDataCodecs.bookLevelUpdate(), MarketDataCodecs.any())) {
            assertContains(assertDecodeFails(codec, withByte(book, bookSideIndex, 0)), "BookLevelUpdate.side has invalid value 0");
            assertContains(assertDecodeFails(codec, withByte(book, bookSideIndex, 0xFF)), "BookLevelUpdate.side", "SBE null");
            assertContains(assertDecodeFails(codec, withByte(book, actionIndex, 4)),
                "BookLevelUpdate.action has invalid value 4", "1=NEW, 2=CHANGE, 3=DELETE");
            assertContains(assertDecodeFails(codec, withByte(book, actionIndex, 0xFF)), "BookLevelUpdate.action", "SBE null");
            assertContains(assertDecodeFails(codec, withShort(book, levelIndex, 0xFFFF)), "levelIndex has invalid value 65535");
        }
    }

    @Test
    void valuesTheWireCannotCarryAreRejectedAtConstruction() {
        assertThrows(IllegalArgumentException.class,
            () -> new BookLevelUpdate(1, 1, BookSide.BID, -1, 1, 1, BookAction.NEW));
        assertThrows(IllegalArgumentException.class,
            () -> new BookLevelUpdate(1, 1, BookSide.BID, MarketDataCodecs.MAX_LEVEL_INDEX + 1, 1, 1, BookAction.NEW));
        assertThrows(NullPointerException.class, () -> new BookLevelUpdate(1, 1, null, 0, 1, 1, BookAction.NEW));
        assertThrows(NullPointerException.class, () -> new BookLevelUpdate(1, 1, BookSide.BID, 0, 1, 1, null));
        assertThrows(NullPointerException.class, () -> new Trade(1, 1, 1, 1, 1, null));
    }

    @Test
    void nullsAndBadRangesAreRejected() {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[128]);
        for (final Codec<?> codec : List.of(MarketDataCodecs.quote(), MarketDataCodecs.trade(),
            MarketDataCodecs.bookLevelUpdate(), MarketDataCodecs.any())) {
            @SuppressWarnings("unchecked")
            final Codec<Object> c = (Codec<Object>) codec;
            assertThrows(NullPointerException.class, () -> c.encodedLength(null));
            assertThrows(NullPointerException.class, () -> c.encode(null, buffer, 0));
            assertThrows(NullPointerException.class, () -> c.decode(null, 0, 64));
            assertThrows(CodecException.class, () -> c.decode(buffer, 100, 64));
            assertThrows(CodecException.class, () -> c.decode(buffer, -1, 8));
        }
        final UnsafeBuffer small = new UnsafeBuffer(new byte[70]);
        final CodecException e = assertThrows(CodecException.class, () -> MarketDataCodecs.quote().encode(QUOTE, small, 10));
        assertContains(e.getMessage(), "needs 64 bytes at offset 10", "capacity is 70");
        assertEquals(new UnsafeBuffer(new byte[70]), small, "a rejected encode writes nothing");
    }

    @Test
    void zeroFilledPayloadIsNotAValidMessage() {
        for (final Codec<?> codec : List.of(MarketDataCodecs.quote(), MarketDataCodecs.any())) {
            assertContains(assertDecodeFails(codec, new byte[MarketDataCodecs.QUOTE_LENGTH]), "schema id 0");
        }
    }

    @Test
    void decodeKeepsNoReferenceToTheReceiveBuffer() {
        for (final MarketDataEvent event : List.of(QUOTE, TRADE, BOOK)) {
            for (final Codec<MarketDataEvent> codec : List.of(typedCodecFor(event), MarketDataCodecs.any())) {
                final UnsafeBuffer rx = new UnsafeBuffer(encode(event));
                assertEquals(event, codec.decode(rx, 0, rx.capacity()));
                assertFalse(SbeFlyweights.get().decodersReference(rx), codec.name() + " kept the buffer after decode");

                final UnsafeBuffer corrupt = new UnsafeBuffer(withShort(encode(event), BLOCK_LENGTH_OFFSET, 1));
                assertThrows(CodecException.class, () -> codec.decode(corrupt, 0, corrupt.capacity()));
                assertFalse(SbeFlyweights.get().decodersReference(corrupt), codec.name() + " kept the buffer after a failure");
            }
        }
    }

    @Test
    void codecNamesAreDistinct() {
        assertEquals("sbe-md-quote", MarketDataCodecs.quote().name());
        assertEquals("sbe-md-trade", MarketDataCodecs.trade().name());
        assertEquals("sbe-md-book-level-update", MarketDataCodecs.bookLevelUpdate().name());
        assertEquals("sbe-md-any", MarketDataCodecs.any().name());
    }
}
