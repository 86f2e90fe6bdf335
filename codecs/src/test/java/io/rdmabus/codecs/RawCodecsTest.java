package io.rdmabus.codecs;

import static io.rdmabus.codecs.CodecAssertions.assertRoundTrip;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.codec.Codec;
import io.rdmabus.codec.CodecException;
import java.util.concurrent.TimeUnit;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RawCodecsTest {
    private final Codec<byte[]> bytes = Codecs.bytes();
    private final Codec<DirectBuffer> buffer = Codecs.buffer();

    /** byte[] has identity equals; compare the decoded arrays by content instead. */
    private static void assertBytesRoundTrip(final byte[] value) {
        final Codec<byte[]> codec = Codecs.bytes();
        final UnsafeBuffer dst = new UnsafeBuffer(new byte[value.length + 20]);
        dst.setMemory(0, dst.capacity(), (byte) 0x77);
        codec.encode(value, dst, 7);
        for (int i = 0; i < dst.capacity(); i++) {
            if (i < 7 || i >= 7 + value.length) {
                assertEquals((byte) 0x77, dst.getByte(i), "byte " + i + " outside the encoded range was modified");
            }
        }
        final byte[] decoded = codec.decode(dst, 7, value.length);
        assertArrayEquals(value, decoded);
        if (value.length > 0) {
            assertNotSame(value, decoded);
        }
    }

    @Test
    void bytesRoundTripsEmptySmallAndLarge() {
        assertBytesRoundTrip(new byte[0]);
        assertBytesRoundTrip(new byte[] {0});
        assertBytesRoundTrip(new byte[] {(byte) 0x80, 0x7F, (byte) 0xFF, 0, 1});
        final byte[] large = new byte[70_000];
        for (int i = 0; i < large.length; i++) {
            large[i] = (byte) (i * 31);
        }
        assertBytesRoundTrip(large);
        assertEquals(70_000, bytes.encodedLength(large));
    }

    @Test
    void bytesDecodeCopiesSoTheReceiveBufferCanBeReused() {
        final UnsafeBuffer rx = new UnsafeBuffer(new byte[] {1, 2, 3, 4});
        final byte[] decoded = bytes.decode(rx, 1, 2);
        rx.setMemory(0, 4, (byte) 9);
        assertArrayEquals(new byte[] {2, 3}, decoded);
    }

    @Test
    void bufferRoundTripsAndCopies() {
        final UnsafeBuffer value = new UnsafeBuffer(new byte[] {10, 20, 30, (byte) 200});
        final DirectBuffer decoded = assertBufferRoundTrip(value);
        assertEquals(4, decoded.capacity());
        assertEquals((byte) 200, decoded.getByte(3));
        assertEquals(0, assertBufferRoundTrip(new UnsafeBuffer(new byte[0])).capacity());
    }

    private DirectBuffer assertBufferRoundTrip(final DirectBuffer value) {
        final UnsafeBuffer dst = new UnsafeBuffer(new byte[value.capacity() + 10]);
        buffer.encode(value, dst, 5);
        final DirectBuffer decoded = buffer.decode(dst, 5, value.capacity());
        dst.setMemory(0, dst.capacity(), (byte) 0);
        // DirectBuffer equality is content equality in Agrona
        assertEquals(value, decoded);
        return decoded;
    }

    @Test
    void nullsAreRejectedWithTheCodecName() {
        for (final Codec<?> codec : new Codec<?>[] {bytes, buffer, Codecs.utf8()}) {
            @SuppressWarnings("unchecked")
            final Codec<Object> c = (Codec<Object>) codec;
            final NullPointerException e1 = assertThrows(NullPointerException.class, () -> c.encodedLength(null));
            assertTrue(e1.getMessage().contains(codec.name()), e1.getMessage());
            assertThrows(NullPointerException.class, () -> c.encode(null, new UnsafeBuffer(new byte[8]), 0));
            final NullPointerException e2 = assertThrows(NullPointerException.class, () -> c.decode(null, 0, 0));
            assertTrue(e2.getMessage().contains("null buffer"), e2.getMessage());
        }
        assertThrows(NullPointerException.class, () -> bytes.encode(new byte[1], null, 0));
    }

    @Test
    void decodeRangeOutsideTheBufferIsACodecException() {
        final UnsafeBuffer rx = new UnsafeBuffer(new byte[8]);
        for (final Codec<?> codec : new Codec<?>[] {bytes, buffer, Codecs.utf8()}) {
            final CodecException e = assertThrows(CodecException.class, () -> codec.decode(rx, 4, 5));
            assertTrue(e.getMessage().contains("capacity 8"), e.getMessage());
            assertThrows(CodecException.class, () -> codec.decode(rx, -1, 2));
            assertThrows(CodecException.class, () -> codec.decode(rx, 0, -1));
            assertThrows(CodecException.class, () -> codec.decode(rx, Integer.MAX_VALUE, 2));
        }
    }

    @Test
    void encodeIntoTooSmallBufferFailsWithoutWriting() {
        final UnsafeBuffer dst = new UnsafeBuffer(new byte[4]);
        final CodecException e = assertThrows(CodecException.class, () -> bytes.encode(new byte[] {1, 2, 3}, dst, 2));
        assertTrue(e.getMessage().contains("needs 3 bytes at offset 2"), e.getMessage());
        assertArrayEquals(new byte[4], dst.byteArray());
    }

    @Test
    void namesAreStable() {
        assertEquals("bytes", bytes.name());
        assertEquals("buffer", buffer.name());
        assertEquals("utf8", Codecs.utf8().name());
    }

    @Test
    void genericRoundTripHelperWorksForBuffers() {
        assertRoundTrip(buffer, new UnsafeBuffer(new byte[] {1, 2, 3}));
    }
}
