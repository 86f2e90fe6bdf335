package io.rdmabus.codecs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.codec.Codec;
import io.rdmabus.codec.CodecException;
import io.rdmabus.codecs.sbe.md.MessageHeaderEncoder;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Property-style tests with fixed seeds (so a failure reproduces): random values round-trip at random offsets, and
 * random bytes either fail with {@link CodecException} or decode to a value that re-encodes to exactly those bytes,
 * which is what "never returns garbage" means for a canonical encoding.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RandomizedRoundTripTest {
    private static final long SEED = 0x5EED_C0DECL;
    private static final int ITERATIONS = 20_000;
    private static final long[] EDGE_LONGS = {Long.MIN_VALUE, Long.MIN_VALUE + 1, -1L, 0L, 1L, Long.MAX_VALUE - 1, Long.MAX_VALUE};

    private static long nextLong(final SplittableRandom random) {
        return random.nextInt(4) == 0 ? EDGE_LONGS[random.nextInt(EDGE_LONGS.length)] : random.nextLong();
    }

    private static MarketDataEvent nextEvent(final SplittableRandom random) {
        return switch (random.nextInt(3)) {
            case 0 -> new Quote(nextLong(random), nextLong(random), nextLong(random), nextLong(random),
                nextLong(random), nextLong(random), nextLong(random));
            case 1 -> new Trade(nextLong(random), nextLong(random), nextLong(random), nextLong(random), nextLong(random),
                AggressorSide.values()[random.nextInt(AggressorSide.values().length)]);
            default -> new BookLevelUpdate(nextLong(random), nextLong(random),
                BookSide.values()[random.nextInt(BookSide.values().length)],
                random.nextInt(MarketDataCodecs.MAX_LEVEL_INDEX + 1), nextLong(random), nextLong(random),
                BookAction.values()[random.nextInt(BookAction.values().length)]);
        };
    }

    /** A random valid string mixing 1-, 2-, 3- and 4-byte code points (no surrogates, which are not scalar values). */
    private static String nextString(final SplittableRandom random) {
        final int codePoints = random.nextInt(40);
        final StringBuilder sb = new StringBuilder();
        for (int i = 0; i < codePoints; i++) {
            final int codePoint = switch (random.nextInt(4)) {
                case 0 -> random.nextInt(0x80);
                case 1 -> random.nextInt(0x80, 0x800);
                case 2 -> {
                    final int c = random.nextInt(0x800, 0x10000);
                    yield Character.isSurrogate((char) c) ? 0xE000 : c;
                }
                default -> random.nextInt(0x10000, 0x110000);
            };
            sb.appendCodePoint(codePoint);
        }
        return sb.toString();
    }

    @Test
    void randomMarketDataRoundTripsThroughTypedAndAnyCodecs() {
        final SplittableRandom random = new SplittableRandom(SEED);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
        final Codec<MarketDataEvent> any = MarketDataCodecs.any();
        for (int i = 0; i < ITERATIONS; i++) {
            final MarketDataEvent event = nextEvent(random);
            final int offset = random.nextInt(0, 128);
            final int length = any.encodedLength(event);
            final byte before = buffer.getByte(offset - 1 < 0 ? 0 : offset - 1);
            final byte after = buffer.getByte(offset + length);
            any.encode(event, buffer, offset);
            if (offset > 0) {
                assertEquals(before, buffer.getByte(offset - 1), "iteration " + i);
            }
            assertEquals(after, buffer.getByte(offset + length), "iteration " + i);
            assertEquals(event, any.decode(buffer, offset, length), "iteration " + i);
            final MarketDataEvent typed = switch (event) {
                case Quote q -> MarketDataCodecs.quote().decode(buffer, offset, length);
                case Trade t -> MarketDataCodecs.trade().decode(buffer, offset, length);
                case BookLevelUpdate b -> MarketDataCodecs.bookLevelUpdate().decode(buffer, offset, length);
            };
            assertEquals(event, typed, "iteration " + i);
        }
    }

    @Test
    void randomStringsAndByteArraysRoundTrip() {
        final SplittableRandom random = new SplittableRandom(SEED + 1);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[512]);
        for (int i = 0; i < ITERATIONS; i++) {
            final String value = nextString(random);
            final int offset = random.nextInt(0, 64);
            final int length = Codecs.utf8().encodedLength(value);
            assertEquals(value.getBytes(StandardCharsets.UTF_8).length, length);
            Codecs.utf8().encode(value, buffer, offset);
            assertEquals(value, Codecs.utf8().decode(buffer, offset, length), "iteration " + i);

            final byte[] bytes = new byte[random.nextInt(0, 200)];
            random.nextBytes(bytes);
            Codecs.bytes().encode(bytes, buffer, offset);
            assertArrayEquals(bytes, Codecs.bytes().decode(buffer, offset, bytes.length), "iteration " + i);
        }
    }

    @Test
    void randomBytesNeverDecodeToGarbage() {
        final SplittableRandom random = new SplittableRandom(SEED + 2);
        final Codec<MarketDataEvent> any = MarketDataCodecs.any();
        final UnsafeBuffer input = new UnsafeBuffer(new byte[MarketDataCodecs.QUOTE_LENGTH + 8]);
        final UnsafeBuffer reencoded = new UnsafeBuffer(new byte[input.capacity()]);
        int decoded = 0;
        int rejected = 0;
        for (int i = 0; i < ITERATIONS; i++) {
            final byte[] noise = new byte[input.capacity()];
            random.nextBytes(noise);
            input.putBytes(0, noise);
            // Mostly a plausible header, so that the body checks (block length, enums, exact length) get exercised.
            final int templateId = 1 + random.nextInt(3);
            final int blockLength = switch (templateId) {
                case 1 -> MarketDataCodecs.QUOTE_LENGTH;
                case 2 -> MarketDataCodecs.TRADE_LENGTH;
                default -> MarketDataCodecs.BOOK_LEVEL_UPDATE_LENGTH;
            } - MessageHeaderEncoder.ENCODED_LENGTH;
            if (random.nextInt(8) != 0) {
                input.putShort(0, (short) blockLength, ByteOrder.LITTLE_ENDIAN);
                input.putShort(2, (short) templateId, ByteOrder.LITTLE_ENDIAN);
                input.putShort(4, (short) MarketDataCodecs.SCHEMA_ID, ByteOrder.LITTLE_ENDIAN);
                input.putShort(6, (short) MarketDataCodecs.SCHEMA_VERSION, ByteOrder.LITTLE_ENDIAN);
            }
            final int length = random.nextInt(4) == 0
                ? random.nextInt(input.capacity() + 1)
                : blockLength + MessageHeaderEncoder.ENCODED_LENGTH;
            try {
                final MarketDataEvent event = any.decode(input, 0, length);
                decoded++;
                assertEquals(length, any.encodedLength(event), "iteration " + i);
                any.encode(event, reencoded, 0);
                for (int b = 0; b < length; b++) {
                    assertEquals(input.getByte(b), reencoded.getByte(b), "iteration " + i + " byte " + b);
                }
            } catch (final CodecException expected) {
                rejected++;
            }
        }
        assertTrue(decoded > ITERATIONS / 10, "the generator should produce valid messages too, decoded " + decoded);
        assertTrue(rejected > ITERATIONS / 10, "the generator should produce invalid messages too, rejected " + rejected);
    }

    @Test
    void randomBytesEitherFailUtf8DecodingOrReencodeIdentically() {
        final SplittableRandom random = new SplittableRandom(SEED + 3);
        final UnsafeBuffer input = new UnsafeBuffer(new byte[32]);
        final UnsafeBuffer reencoded = new UnsafeBuffer(new byte[32]);
        int decoded = 0;
        int rejected = 0;
        for (int i = 0; i < ITERATIONS; i++) {
            final int length = random.nextInt(0, 9);
            for (int b = 0; b < length; b++) {
                // bias towards bytes that start or continue multi-byte sequences, where the edge cases are
                input.putByte(b, (byte) (random.nextBoolean() ? random.nextInt(0x80, 0x100) : random.nextInt(0x100)));
            }
            try {
                final String value = Codecs.utf8().decode(input, 0, length);
                decoded++;
                assertEquals(length, Codecs.utf8().encodedLength(value), "iteration " + i);
                Codecs.utf8().encode(value, reencoded, 0);
                for (int b = 0; b < length; b++) {
                    assertEquals(input.getByte(b), reencoded.getByte(b), "iteration " + i + " byte " + b);
                }
            } catch (final CodecException expected) {
                rejected++;
            }
        }
        assertTrue(decoded > 100 && rejected > 100, "decoded " + decoded + ", rejected " + rejected);
    }
}
