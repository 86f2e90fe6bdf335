package io.rdmabus.core;

import io.rdmabus.codec.Codec;
import io.rdmabus.codec.CodecException;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** Minimal codecs for bus-api's own unit tests (the real ones live in module codecs, which depends on bus-api). */
public final class TestCodecs {
    /** An 8-byte long. */
    public static final Codec<Long> LONG = new Codec<>() {
        @Override
        public int encodedLength(final Long value) {
            return Long.BYTES;
        }

        @Override
        public void encode(final Long value, final MutableDirectBuffer buffer, final int offset) {
            buffer.putLong(offset, value);
        }

        @Override
        public Long decode(final DirectBuffer buffer, final int offset, final int length) {
            if (length != Long.BYTES) {
                throw new CodecException("long needs 8 bytes, got " + length);
            }
            return buffer.getLong(offset);
        }

        @Override
        public String name() {
            return "long";
        }
    };

    /** Raw bytes: the codec the last-value cache's own topics use. */
    public static final Codec<byte[]> BYTES = LastValueProtocol.BYTES;

    private TestCodecs() {
    }
}
