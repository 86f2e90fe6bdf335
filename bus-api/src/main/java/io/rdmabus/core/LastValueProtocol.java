package io.rdmabus.core;

import io.rdmabus.Delivery;
import io.rdmabus.Topic;
import io.rdmabus.codec.Codec;
import io.rdmabus.codec.CodecException;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The late-join protocol of a topic with a last-value cache (docs/architecture.md, "Late join"): two bus-internal
 * RELIABLE topics per cached topic, named after its topic id. A joining subscriber publishes a request
 * ({@code _lvc-q.<id hex>}: request id, topic id); every bus with a publication of the topic answers with one snapshot
 * per publication, in parts ({@code _lvc-s.<id hex>}), each part little-endian:
 * <pre>
 *   0 request id (long)   8 session id (int)   12 topic id (int)   16 last sequence (long)
 *  24 part (int)         28 parts (int)       32 entries (int)    36 reserved (int)
 *  40 entries: key (long), sequence (long), timestamp ns (long), length (int), payload (length bytes)
 * </pre>
 * "last sequence" is the last frame sequence the publication had sent when the snapshot was taken (-1 for none): the
 * snapshot is the state after it, and the live stream from the next sequence on continues it.
 */
final class LastValueProtocol {
    static final int REQUEST_LENGTH = 12;
    static final int PART_HEADER = 40;
    static final int ENTRY_HEADER = 28;
    /** A snapshot part holds entries up to this many bytes (one bigger entry gets a part of its own). */
    static final int PART_BYTES = 256 * 1024;
    static final Codec<byte[]> BYTES = new Codec<>() {
        @Override
        public int encodedLength(final byte[] value) {
            return value.length;
        }

        @Override
        public void encode(final byte[] value, final MutableDirectBuffer buffer, final int offset) {
            buffer.putBytes(offset, value);
        }

        @Override
        public byte[] decode(final DirectBuffer buffer, final int offset, final int length) {
            final byte[] bytes = new byte[length];
            buffer.getBytes(offset, bytes);
            return bytes;
        }

        @Override
        public String name() {
            return "lvc-bytes";
        }
    };

    private LastValueProtocol() {
    }

    static Topic<byte[]> requestTopic(final Topic<?> topic) {
        return Topic.of("_lvc-q." + Integer.toHexString(topic.topicId()), BYTES, Delivery.RELIABLE).withMaxMessageLength(REQUEST_LENGTH);
    }

    static Topic<byte[]> snapshotTopic(final Topic<?> topic) {
        final long longest = (long) PART_HEADER + ENTRY_HEADER + Math.max(PART_BYTES, topic.maxMessageLength());
        return Topic.of("_lvc-s." + Integer.toHexString(topic.topicId()), BYTES, Delivery.RELIABLE)
            .withMaxMessageLength((int) Math.min(Topic.MAX_MESSAGE_LENGTH_LIMIT, longest));
    }

    /** @throws CodecException for a part that does not parse */
    static void checkPart(final DirectBuffer part, final int length) {
        if (length < PART_HEADER) {
            throw new CodecException("snapshot part of " + length + " bytes is shorter than its " + PART_HEADER + "-byte header");
        }
        int offset = PART_HEADER;
        final int entries = part.getInt(32);
        for (int i = 0; i < entries; i++) {
            if (offset + ENTRY_HEADER > length) {
                throw new CodecException("snapshot part ends inside entry " + i + " of " + entries);
            }
            final int entryLength = part.getInt(offset + 24);
            if (entryLength < 0 || offset + ENTRY_HEADER + (long) entryLength > length) {
                throw new CodecException("snapshot entry " + i + " has a bad length " + entryLength);
            }
            offset += ENTRY_HEADER + entryLength;
        }
    }
}
