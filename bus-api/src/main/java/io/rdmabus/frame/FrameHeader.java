package io.rdmabus.frame;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The bus's wire frame header, version 1: 32 bytes, little-endian, in front of every payload on every
 * transport (so a plain Aeron subscriber on the same channel can read it; see {@code docs/wire-format.md}).
 *
 * <pre>
 *  0  u8   version        = 1
 *  1  u8   type           1 = DATA
 *  2  u16  flags          0x80 BEGIN, 0x40 END (both set: an unfragmented message)
 *  4  i32  frameLength    header + payload, bytes; must equal the length the transport delivered
 *  8  i32  topicId        FNV-1a of the topic name
 * 12  i32  sessionId      the publisher's random session id
 * 16  i64  sequence       per (session, topic) frame counter, from 0, no gaps on the sending side
 * 24  i64  timestampNs    sender's wall clock (epoch ns) when the message was published
 * 32  ...  payload
 * </pre>
 *
 * <p>Static accessors only: no allocation, usable on the hot path over any buffer.
 */
public final class FrameHeader {
    /** Header length in bytes. */
    public static final int LENGTH = 32;
    /** The only version this build writes and accepts. */
    public static final int VERSION = 1;
    /** A data frame. */
    public static final int TYPE_DATA = 1;
    /** First frame of a message. */
    public static final int FLAG_BEGIN = 0x80;
    /** Last frame of a message. */
    public static final int FLAG_END = 0x40;
    /** A whole message in one frame. */
    public static final int FLAGS_UNFRAGMENTED = FLAG_BEGIN | FLAG_END;

    /**
     * Receive rule on the sequence (docs/wire-format.md, "Sequence rule"): a BEST_EFFORT frame at most this many frames
     * ahead of its session's expected sequence is a gap, taken at once; a jump beyond it, or any jump on a RELIABLE topic,
     * is a suspect that the session's next frame confirms (it is the suspect's sequence + 1) or refutes (corrupt).
     */
    public static final long BEST_EFFORT_GAP_BOUND = 1024;

    /** Offset of the version byte. */
    public static final int VERSION_OFFSET = 0;
    /** Offset of the type byte. */
    public static final int TYPE_OFFSET = 1;
    /** Offset of the flags. */
    public static final int FLAGS_OFFSET = 2;
    /** Offset of the frame length. */
    public static final int FRAME_LENGTH_OFFSET = 4;
    /** Offset of the topic id. */
    public static final int TOPIC_ID_OFFSET = 8;
    /** Offset of the session id. */
    public static final int SESSION_ID_OFFSET = 12;
    /** Offset of the sequence. */
    public static final int SEQUENCE_OFFSET = 16;
    /** Offset of the timestamp. */
    public static final int TIMESTAMP_OFFSET = 24;

    /** {@link #validate} result: the frame is well formed. */
    public static final int VALID = 0;
    /** Shorter than a header. */
    public static final int ERR_TRUNCATED_HEADER = 1;
    /** Unknown version. */
    public static final int ERR_VERSION = 2;
    /** Unknown type. */
    public static final int ERR_TYPE = 3;
    /** Unknown flag bits, or no flags. */
    public static final int ERR_FLAGS = 4;
    /** Declared frame length differs from the delivered length. */
    public static final int ERR_LENGTH = 5;
    /** Negative sequence. */
    public static final int ERR_SEQUENCE = 6;
    /** Frame longer than the receiver accepts. */
    public static final int ERR_TOO_LONG = 7;

    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;
    /** Bit positions of the fields in the header's first little-endian word (from {@link #VERSION_OFFSET}), from the offsets above. */
    private static final int TYPE_SHIFT = (TYPE_OFFSET - VERSION_OFFSET) * Byte.SIZE;
    private static final int FLAGS_SHIFT = (FLAGS_OFFSET - VERSION_OFFSET) * Byte.SIZE;
    private static final int FRAME_LENGTH_SHIFT = (FRAME_LENGTH_OFFSET - VERSION_OFFSET) * Byte.SIZE;
    /** Bit position of the session id in the word at {@link #TOPIC_ID_OFFSET}. */
    private static final int SESSION_ID_SHIFT = (SESSION_ID_OFFSET - TOPIC_ID_OFFSET) * Byte.SIZE;

    private FrameHeader() {
    }

    /**
     * Writes a data frame header.
     *
     * @param buffer      destination
     * @param offset      where the frame starts
     * @param flags       {@link #FLAG_BEGIN}/{@link #FLAG_END} bits
     * @param frameLength header + payload bytes
     * @param topicId     topic id
     * @param sessionId   publisher session id
     * @param sequence    frame sequence
     * @param timestampNs epoch ns
     */
    public static void write(final MutableDirectBuffer buffer, final int offset, final int flags, final int frameLength,
                             final int topicId, final int sessionId, final long sequence, final long timestampNs) {
        // four little-endian words, the same bytes as eight field stores, with half the stores and bounds checks
        buffer.putLong(offset + VERSION_OFFSET,
            VERSION | TYPE_DATA << TYPE_SHIFT | (flags & 0xFFFFL) << FLAGS_SHIFT | (long) frameLength << FRAME_LENGTH_SHIFT, ORDER);
        buffer.putLong(offset + TOPIC_ID_OFFSET, topicId & 0xFFFF_FFFFL | (long) sessionId << SESSION_ID_SHIFT, ORDER);
        buffer.putLong(offset + SEQUENCE_OFFSET, sequence, ORDER);
        buffer.putLong(offset + TIMESTAMP_OFFSET, timestampNs, ORDER);
    }

    /**
     * Bounds-checks every field. Never throws for any input whose {@code [offset, offset + length)} lies in the buffer.
     *
     * @param buffer         source
     * @param offset         frame start
     * @param length         bytes the transport delivered
     * @param maxFrameLength the largest frame accepted
     * @return {@link #VALID} or an {@code ERR_*} code
     */
    public static int validate(final DirectBuffer buffer, final int offset, final int length, final int maxFrameLength) {
        if (length < LENGTH) {
            return ERR_TRUNCATED_HEADER;
        }
        if (length > maxFrameLength) {
            return ERR_TOO_LONG;
        }
        final long first = buffer.getLong(offset + VERSION_OFFSET, ORDER); // version, type, flags, frame length: one read
        if ((first & 0xFF) != VERSION) {
            return ERR_VERSION;
        }
        if ((first >>> TYPE_SHIFT & 0xFF) != TYPE_DATA) {
            return ERR_TYPE;
        }
        final int flags = (int) (first >>> FLAGS_SHIFT & 0xFFFF);
        if ((flags & ~FLAGS_UNFRAGMENTED) != 0) {
            return ERR_FLAGS;
        }
        if ((int) (first >>> FRAME_LENGTH_SHIFT) != length) {
            return ERR_LENGTH;
        }
        if (sequence(buffer, offset) < 0) {
            return ERR_SEQUENCE;
        }
        return VALID;
    }

    /**
     * @param code a {@link #validate} result
     * @return a short description for logs
     */
    public static String describe(final int code) {
        return switch (code) {
            case VALID -> "valid";
            case ERR_TRUNCATED_HEADER -> "shorter than the " + LENGTH + "-byte header";
            case ERR_VERSION -> "unsupported version (this build reads version " + VERSION + ")";
            case ERR_TYPE -> "unknown frame type";
            case ERR_FLAGS -> "unknown flag bits";
            case ERR_LENGTH -> "declared frame length differs from the delivered length";
            case ERR_SEQUENCE -> "negative sequence";
            case ERR_TOO_LONG -> "longer than the largest frame accepted";
            default -> "unknown error " + code;
        };
    }

    /** @param buffer source @param offset frame start @return the flags */
    public static int flags(final DirectBuffer buffer, final int offset) {
        return buffer.getShort(offset + FLAGS_OFFSET, ORDER) & 0xFFFF;
    }

    /** @param buffer source @param offset frame start @return the declared frame length */
    public static int frameLength(final DirectBuffer buffer, final int offset) {
        return buffer.getInt(offset + FRAME_LENGTH_OFFSET, ORDER);
    }

    /** @param buffer source @param offset frame start @return the topic id */
    public static int topicId(final DirectBuffer buffer, final int offset) {
        return buffer.getInt(offset + TOPIC_ID_OFFSET, ORDER);
    }

    /** @param buffer source @param offset frame start @return the session id */
    public static int sessionId(final DirectBuffer buffer, final int offset) {
        return buffer.getInt(offset + SESSION_ID_OFFSET, ORDER);
    }

    /** @param buffer source @param offset frame start @return the sequence */
    public static long sequence(final DirectBuffer buffer, final int offset) {
        return buffer.getLong(offset + SEQUENCE_OFFSET, ORDER);
    }

    /** @param buffer source @param offset frame start @return the timestamp, epoch ns */
    public static long timestampNs(final DirectBuffer buffer, final int offset) {
        return buffer.getLong(offset + TIMESTAMP_OFFSET, ORDER);
    }

    /**
     * The topic id for a name: 32-bit FNV-1a over its UTF-16 code units, never 0.
     *
     * @param topicName the name
     * @return its id
     */
    public static int topicId(final String topicName) {
        int hash = 0x811C9DC5;
        for (int i = 0; i < topicName.length(); i++) {
            hash ^= topicName.charAt(i);
            hash *= 0x01000193;
        }
        return hash == 0 ? 1 : hash;
    }
}
