package io.rdmabus.soak.fuzz;

import java.util.zip.CRC32;

import io.rdmabus.codec.Codec;
import io.rdmabus.codec.CodecException;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** A long followed by the CRC-32 of its 8 bytes: a payload the fuzzer cannot corrupt without the codec noticing. */
public final class CheckedLongCodec implements Codec<Long> {
    /** Encoded bytes. */
    public static final int LENGTH = 12;

    static int crc(final long value) {
        final CRC32 crc = new CRC32();
        for (int i = 0; i < 8; i++) {
            crc.update((int) (value >>> (8 * i)) & 0xFF);
        }
        return (int) crc.getValue();
    }

    @Override
    public int encodedLength(final Long value) {
        return LENGTH;
    }

    @Override
    public void encode(final Long value, final MutableDirectBuffer buffer, final int offset) {
        buffer.putLong(offset, value);
        buffer.putInt(offset + 8, crc(value));
    }

    @Override
    public Long decode(final DirectBuffer buffer, final int offset, final int length) {
        if (length != LENGTH) {
            throw new CodecException("checked long needs " + LENGTH + " bytes, got " + length);
        }
        final long value = buffer.getLong(offset);
        if (buffer.getInt(offset + 8) != crc(value)) {
            throw new CodecException("checksum mismatch");
        }
        return value;
    }

    @Override
    public String name() {
        return "checked-long";
    }
}
