package io.rdmabus.codecs;

import io.rdmabus.codec.Codec;
import org.agrona.DirectBuffer;

/**
 * General-purpose codecs. All returned instances are stateless singletons, safe to share across threads and topics.
 *
 * <p>Error contract: a {@code null} value or buffer is a programming error and throws {@link NullPointerException}
 * naming the codec; a decode range outside the buffer, a value that cannot be encoded, or bytes that are not a valid
 * encoding throw {@link io.rdmabus.codec.CodecException} with the offending lengths or bytes in the message.
 */
public final class Codecs {
    private Codecs() {
    }

    /**
     * @return the whole payload as a {@code byte[]} (no length prefix); decoding returns a fresh copy, and an empty
     *     payload decodes to a shared empty array
     */
    public static Codec<byte[]> bytes() {
        return BytesCodec.INSTANCE;
    }

    /**
     * @return the whole payload as an Agrona buffer: encoding writes {@code value.capacity()} bytes, decoding returns
     *     a heap copy that stays valid after the receive buffer is recycled
     */
    public static Codec<DirectBuffer> buffer() {
        return BufferCodec.INSTANCE;
    }

    /**
     * @return a {@link String} as strict UTF-8 (no length prefix): unpaired surrogates fail to encode and malformed
     *     UTF-8 fails to decode, both with {@link io.rdmabus.codec.CodecException}
     */
    public static Codec<String> utf8() {
        return Utf8Codec.INSTANCE;
    }
}
