package io.rdmabus.codecs;

import io.rdmabus.codec.CodecException;
import org.agrona.DirectBuffer;

/** Argument checks shared by the codecs; every failure names the codec and the offending numbers. */
final class Bounds {
    private Bounds() {
    }

    /**
     * Checks that {@code [offset, offset + length)} lies inside {@code buffer}, so that later reads stay in bounds
     * even when Agrona's own bounds checks are disabled.
     */
    static void checkDecodeRange(final String codecName, final DirectBuffer buffer, final int offset, final int length) {
        if (buffer == null) {
            throw new NullPointerException(codecName + ": decode called with a null buffer");
        }
        if (offset < 0 || length < 0 || (long) offset + length > buffer.capacity()) {
            throw new CodecException(codecName + ": decode range [offset=" + offset + ", length=" + length
                + "] does not fit in a buffer of capacity " + buffer.capacity());
        }
    }

    /** Checks that {@code encodedLength} bytes at {@code offset} fit in {@code buffer}. */
    static void checkEncodeRange(
        final String codecName, final DirectBuffer buffer, final int offset, final int encodedLength) {
        if (buffer == null) {
            throw new NullPointerException(codecName + ": encode called with a null buffer");
        }
        if (offset < 0 || (long) offset + encodedLength > buffer.capacity()) {
            throw new CodecException(codecName + ": encode needs " + encodedLength + " bytes at offset " + offset
                + " but the buffer capacity is " + buffer.capacity());
        }
    }

    /** Rejects a null value with a message that says which codec and what to send instead. */
    static <T> T requireValue(final String codecName, final T value, final String hint) {
        if (value == null) {
            throw new NullPointerException(codecName + ": cannot encode null" + hint);
        }
        return value;
    }
}
