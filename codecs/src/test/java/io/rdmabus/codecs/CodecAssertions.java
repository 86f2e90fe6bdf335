package io.rdmabus.codecs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmabus.codec.Codec;
import io.rdmabus.codec.CodecException;
import java.nio.ByteBuffer;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/** Shared checks of the {@link Codec} contract, used by every codec's tests. */
final class CodecAssertions {
    /** Bytes around the encoded range that must stay untouched. */
    static final int GUARD_BYTES = 13;

    private CodecAssertions() {
    }

    /**
     * Encodes {@code value} at offset 0 and at a non-zero offset, into heap and off-heap buffers pre-filled with two
     * different patterns, and checks: bytes outside {@code [offset, offset + encodedLength)} are untouched; the bytes
     * inside do not depend on the previous content (so every one of them was written); decoding gives back a value
     * equal to {@code expected}.
     *
     * @return the encoded bytes
     */
    static <T> byte[] assertRoundTrip(final Codec<T> codec, final T value, final T expected) {
        final int length = codec.encodedLength(value);
        byte[] reference = null;
        for (final boolean offHeap : new boolean[] {false, true}) {
            for (final int offset : new int[] {0, GUARD_BYTES}) {
                for (final byte fill : new byte[] {(byte) 0x00, (byte) 0xA5, (byte) 0xFF}) {
                    final int capacity = offset + length + GUARD_BYTES;
                    final MutableDirectBuffer buffer = offHeap
                        ? new UnsafeBuffer(ByteBuffer.allocateDirect(capacity))
                        : new UnsafeBuffer(new byte[capacity]);
                    buffer.setMemory(0, capacity, fill);

                    codec.encode(value, buffer, offset);

                    for (int i = 0; i < capacity; i++) {
                        if (i < offset || i >= offset + length) {
                            assertEquals(fill, buffer.getByte(i),
                                codec.name() + ": byte " + i + " outside [" + offset + ", " + (offset + length)
                                    + ") was modified");
                        }
                    }
                    final byte[] encoded = new byte[length];
                    buffer.getBytes(offset, encoded);
                    if (reference == null) {
                        reference = encoded;
                    } else {
                        assertArrayEquals(reference, encoded,
                            codec.name() + ": encoding depends on the previous buffer content (fill " + fill + ")");
                    }
                    assertEquals(expected, codec.decode(buffer, offset, length), codec.name() + ": round trip");
                }
            }
        }
        return reference;
    }

    static <T> byte[] assertRoundTrip(final Codec<T> codec, final T value) {
        return assertRoundTrip(codec, value, value);
    }

    /** @return {@code bytes} copied to offset {@link #GUARD_BYTES} of a buffer with spare room on both sides */
    static DirectBuffer framed(final byte[] bytes) {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[bytes.length + 2 * GUARD_BYTES]);
        buffer.setMemory(0, buffer.capacity(), (byte) 0x5A);
        buffer.putBytes(GUARD_BYTES, bytes);
        return buffer;
    }

    /** Decodes {@code bytes} (placed at a non-zero offset) and expects a CodecException; returns its message. */
    static String assertDecodeFails(final Codec<?> codec, final byte[] bytes) {
        return assertDecodeFails(codec, bytes, bytes.length);
    }

    /** Decodes the first {@code length} of {@code bytes} and expects a CodecException; returns its message. */
    static String assertDecodeFails(final Codec<?> codec, final byte[] bytes, final int length) {
        final DirectBuffer buffer = framed(bytes);
        final CodecException e = assertThrows(CodecException.class, () -> codec.decode(buffer, GUARD_BYTES, length),
            codec.name() + ": decoding " + length + " bytes should fail");
        return e.getMessage();
    }
}
