package io.rdmabus.codecs;

import static io.rdmabus.codecs.CodecAssertions.assertDecodeFails;
import static io.rdmabus.codecs.CodecAssertions.assertRoundTrip;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.codec.Codec;
import io.rdmabus.codec.CodecException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class Utf8CodecTest {
    private final Codec<String> utf8 = Codecs.utf8();

    private static byte[] bytes(final int... values) {
        final byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }

    @Test
    void roundTripsEdgeStrings() {
        final String[] values = {
            "",
            "a",
            "hello, bus",
            "\u0000",
            "\u007F\u0080",
            "\u07FF\u0800",
            "caf\u00E9",
            "\u20AC 100",
            "\u65E5\u672C\u8A9E",
            "\uD834\uDD1E",                    // U+1D11E musical G clef, a surrogate pair
            "\uDBFF\uDFFF",                    // U+10FFFF, the last code point
            "\uFFFF\uFFFE",                    // noncharacters are valid scalar values
            "mix a\u00E9\u20AC\uD83D\uDE00z",
        };
        for (final String value : values) {
            final byte[] encoded = assertRoundTrip(utf8, value);
            assertArrayEquals(value.getBytes(StandardCharsets.UTF_8), encoded, "UTF-8 bytes of " + value);
            assertEquals(encoded.length, utf8.encodedLength(value));
        }
    }

    @Test
    void roundTripsStringsLargerThanTheRetainedScratch() {
        final StringBuilder sb = new StringBuilder();
        while (sb.length() < 100_000) {
            sb.append("x\u00E9\u20AC\uD83D\uDE00");
        }
        final String big = sb.toString();
        assertRoundTrip(utf8, big);
        final String ascii = "a".repeat(70_000);
        assertRoundTrip(utf8, ascii);
        // and a small one again on the same thread: scratch state must not leak between calls
        assertRoundTrip(utf8, "\u00E9");
    }

    @Test
    void unpairedSurrogatesAreRejectedOnEncode() {
        for (final String bad : new String[] {"\uD800", "a\uDC00", "\uDC00\uD800", "x\uD83Dy", "end\uD83D"}) {
            final CodecException e = assertThrows(CodecException.class, () -> utf8.encodedLength(bad));
            assertTrue(e.getMessage().contains("unpaired UTF-16 surrogate"), e.getMessage());
            final UnsafeBuffer dst = new UnsafeBuffer(new byte[32]);
            assertThrows(CodecException.class, () -> utf8.encode(bad, dst, 0));
            assertArrayEquals(new byte[32], dst.byteArray(), "nothing may be written for a rejected string");
        }
    }

    @Test
    void malformedUtf8IsRejectedOnDecode() {
        final byte[][] malformed = {
            bytes(0xFF),                       // never valid
            bytes(0x80),                       // lone continuation byte
            bytes(0xC3, 0x28),                 // lead byte followed by a non-continuation
            bytes(0xC0, 0x80),                 // overlong NUL
            bytes(0xE0, 0x80, 0xAF),           // overlong '/'
            bytes(0xED, 0xA0, 0x80),           // UTF-16 surrogate D800 encoded as UTF-8 (CESU)
            bytes(0xF4, 0x90, 0x80, 0x80),     // above U+10FFFF
            bytes(0xE2, 0x82),                 // truncated euro sign
            bytes('o', 'k', 0xF0, 0x9F, 0x98), // truncated 4-byte sequence at the end
        };
        for (final byte[] bad : malformed) {
            final String message = assertDecodeFails(utf8, bad);
            assertTrue(message.contains("malformed UTF-8 at byte index"), message);
        }
        assertTrue(assertDecodeFails(utf8, bytes('a', 'b', 0xC3, 0x28)).contains("byte index 2 of 4"));
    }

    @Test
    void everyTruncationEitherEndsOnACharacterBoundaryOrFails() {
        final String value = "a\u00E9\u20AC\uD834\uDD1Eb";
        final byte[] encoded = value.getBytes(StandardCharsets.UTF_8);
        // byte length -> decoded prefix, for lengths that end on a code point boundary
        final String[] prefixAt = new String[encoded.length + 1];
        int byteIndex = 0;
        for (int i = 0; i < value.length(); i = value.offsetByCodePoints(i, 1)) {
            prefixAt[byteIndex] = value.substring(0, i);
            byteIndex += new String(Character.toChars(value.codePointAt(i))).getBytes(StandardCharsets.UTF_8).length;
        }
        prefixAt[encoded.length] = value;
        int failures = 0;
        for (int length = 0; length < encoded.length; length++) {
            if (prefixAt[length] != null) {
                assertEquals(prefixAt[length], utf8.decode(CodecAssertions.framed(encoded), CodecAssertions.GUARD_BYTES, length));
            } else {
                assertDecodeFails(utf8, encoded, length);
                failures++;
            }
        }
        assertEquals(1 + 2 + 3, failures, "cut points inside the 2-, 3- and 4-byte sequences");
    }

    @Test
    void decodingFromSeveralThreadsIsIndependent() throws Exception {
        final ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            final List<Callable<Integer>> tasks = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                final int seed = t;
                tasks.add(() -> {
                    final UnsafeBuffer buffer = new UnsafeBuffer(new byte[1024]);
                    for (int i = 0; i < 5_000; i++) {
                        final String value = "t" + seed + "-\u00E9\u20AC-" + "z".repeat((i + seed * 7) % 300);
                        utf8.encode(value, buffer, 3);
                        final String decoded = utf8.decode(buffer, 3, utf8.encodedLength(value));
                        if (!value.equals(decoded)) {
                            throw new AssertionError("thread " + seed + " iteration " + i + ": " + decoded);
                        }
                    }
                    return 5_000;
                });
            }
            for (final Future<Integer> f : pool.invokeAll(tasks)) {
                assertEquals(5_000, f.get());
            }
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        }
    }
}
