package io.rdmabus.codecs;

import io.rdmabus.codec.Codec;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** The whole payload as a {@code byte[]}; decoding copies, so the result never aliases the receive buffer. */
final class BytesCodec implements Codec<byte[]> {
    static final BytesCodec INSTANCE = new BytesCodec();
    private static final String NAME = "bytes";
    private static final byte[] EMPTY = new byte[0];

    private BytesCodec() {
    }

    @Override
    public int encodedLength(final byte[] value) {
        return Bounds.requireValue(NAME, value, " (use an empty array for an empty payload)").length;
    }

    @Override
    public void encode(final byte[] value, final MutableDirectBuffer buffer, final int offset) {
        final int length = encodedLength(value);
        Bounds.checkEncodeRange(NAME, buffer, offset, length);
        buffer.putBytes(offset, value);
    }

    @Override
    public byte[] decode(final DirectBuffer buffer, final int offset, final int length) {
        Bounds.checkDecodeRange(NAME, buffer, offset, length);
        if (length == 0) {
            return EMPTY;
        }
        final byte[] copy = new byte[length];
        buffer.getBytes(offset, copy);
        return copy;
    }

    @Override
    public String name() {
        return NAME;
    }
}
