package io.rdmabus.codecs;

import io.rdmabus.codec.Codec;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The whole payload as an Agrona buffer. Encoding writes all {@code capacity()} bytes of the value; decoding copies
 * into a fresh heap {@link UnsafeBuffer}, because the receive buffer is re-posted to the NIC after the call.
 */
final class BufferCodec implements Codec<DirectBuffer> {
    static final BufferCodec INSTANCE = new BufferCodec();
    private static final String NAME = "buffer";

    private BufferCodec() {
    }

    @Override
    public int encodedLength(final DirectBuffer value) {
        return Bounds.requireValue(NAME, value, " (use a zero-capacity buffer for an empty payload)").capacity();
    }

    @Override
    public void encode(final DirectBuffer value, final MutableDirectBuffer buffer, final int offset) {
        final int length = encodedLength(value);
        Bounds.checkEncodeRange(NAME, buffer, offset, length);
        buffer.putBytes(offset, value, 0, length);
    }

    @Override
    public DirectBuffer decode(final DirectBuffer buffer, final int offset, final int length) {
        Bounds.checkDecodeRange(NAME, buffer, offset, length);
        final byte[] copy = new byte[length];
        buffer.getBytes(offset, copy);
        return new UnsafeBuffer(copy);
    }

    @Override
    public String name() {
        return NAME;
    }
}
