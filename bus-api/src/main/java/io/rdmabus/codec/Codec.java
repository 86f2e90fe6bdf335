package io.rdmabus.codec;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Turns values into bytes written in place into a transport-owned (possibly NIC-registered) buffer,
 * and back from a read-only view of a received frame.
 *
 * <p>Contract: {@link #encode} writes exactly {@link #encodedLength} bytes; {@link #decode} must not keep a
 * reference to {@code buffer} after it returns (the buffer is re-posted to the NIC), and must throw
 * {@link CodecException} for a truncated or corrupt buffer rather than returning garbage.
 * Implementations are stateless or thread-confined; one instance may be shared by many topics.
 *
 * @param <T> the value type
 */
public interface Codec<T> {
    /**
     * @param value the value to encode
     * @return the exact number of bytes {@link #encode} will write for {@code value}
     */
    int encodedLength(T value);

    /**
     * Encodes {@code value} at {@code offset}. The caller guarantees {@link #encodedLength} bytes of room.
     *
     * @param value  the value
     * @param buffer the destination (often a transport's claimed send buffer)
     * @param offset where the first byte goes
     */
    void encode(T value, MutableDirectBuffer buffer, int offset);

    /**
     * Decodes a value from {@code length} bytes at {@code offset}.
     *
     * @param buffer a view that is only valid during this call
     * @param offset first byte of the payload
     * @param length payload length in bytes
     * @return the decoded value, never {@code null}
     * @throws CodecException if the bytes are not a valid encoding
     */
    T decode(DirectBuffer buffer, int offset, int length);

    /** @return a short name used in logs and error messages, e.g. {@code "utf8"} */
    String name();
}
