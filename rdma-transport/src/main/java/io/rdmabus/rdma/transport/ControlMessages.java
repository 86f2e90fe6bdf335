package io.rdmabus.rdma.transport;

import io.rdmabus.frame.FrameHeader;

import org.agrona.DirectBuffer;

/**
 * Pure validation of one received RC message (the {@link Wire} envelope and, for control messages, its arguments, read
 * through a {@link ControlFlyweight}),
 * so the poller can drop and count malformed input instead of acting on it, and so the parser can be fuzzed on a
 * host without verbs. Stateless and allocation-free; never throws for any {@code [offset, offset + length)} inside
 * the buffer.
 *
 * <p>Rules (a message that breaks one is malformed): at least the 8-byte envelope; the type word is one of
 * {@link Wire}'s types with its reserved bytes 0 (the poller reads type as a 32-bit word); DATA carries a non-zero
 * topic id and at most {@code maxFrameBytes} after the envelope; control messages are exactly
 * {@link Wire#CONTROL_MESSAGE_BYTES} long, AUTH exactly {@link Wire#AUTH_BYTES}; INIT grants 1..{@code maxCredits}
 * credits and a frame size at least ours; CREDIT returns 0..{@code maxCredits} (0: a no-op whose signalled completion
 * releases unsignalled data sends); SUB/UNSUB name a non-zero topic id; RESUME is exactly {@link Wire#RESUME_BYTES}
 * long with a non-zero topic id, reserved bytes 12..15 zero and a next sequence &gt;= 0; START likewise ({@link Wire#START_BYTES}
 * long, non-zero topic id, reserved bytes 12..15 zero, first sequence &gt;= 0); RESUME_FAILED is exactly
 * {@link Wire#RESUME_FAILED_BYTES} long with a non-zero topic id, retention frames &gt;= 1, next sequence &gt;= 0 and
 * oldest sequence &gt;= -1; NAK is exactly {@link Wire#NAK_BYTES} long with a non-zero topic id, a count of
 * 1..{@link Wire#NAK_MAX_FRAMES} and a first sequence &gt;= 0; RECOVERED carries a non-zero topic id and a bus frame of
 * at least a frame header and at most {@code maxFrameBytes}; TOPIC_CREDIT is exactly {@link Wire#CONTROL_MESSAGE_BYTES}
 * long with a non-zero topic id, 1..{@code maxCredits} frames and reserved bytes 12..15 zero (whether it fits the
 * topic's window is the poller's check).
 *
 * <p>A DATA message's bus frame (after the envelope) is not looked at here: the poller validates its header once, when
 * it arrives (see {@link Poller}).
 */
final class ControlMessages {
    /** Too short for the envelope (or, for control messages, for {@link Wire#CONTROL_MESSAGE_BYTES}). */
    static final int ERR_TRUNCATED = -1;
    /** Not a known type, or reserved bytes set. */
    static final int ERR_TYPE = -2;
    /** Topic id 0 (never produced by FNV-1a topic ids). */
    static final int ERR_TOPIC = -3;
    /** DATA longer than the largest frame, or a control message longer than {@link Wire#CONTROL_MESSAGE_BYTES}. */
    static final int ERR_TOO_LONG = -4;
    /** INIT with a credit count outside 1..maxCredits, CREDIT outside 0..maxCredits, or TOPIC_CREDIT outside 1..maxCredits. */
    static final int ERR_CREDITS = -5;
    /** INIT announcing a smaller frame than ours: a configuration mismatch, not corruption. */
    static final int ERR_PEER_FRAME = -6;
    /** RESUME/RESUME_FAILED/START/NAK with a negative sequence, retention frames below 1, a NAK count outside 1..1024, or reserved bytes set. */
    static final int ERR_SEQUENCE = -7;

    private ControlMessages() {
    }

    /**
     * Classifies the message at {@code [offset, offset + length)} of {@code buffer} through a flyweight of its own (for
     * tests and tools; the poller wraps its own {@link ControlFlyweight} and calls {@link #classify(ControlFlyweight, int, int, int)}).
     *
     * @param buffer        the receive buffer
     * @param offset        start of the message
     * @param length        bytes received (the work completion's byte length)
     * @param maxFrameBytes this node's largest bus frame ({@code rdma.frame.bytes})
     * @param maxCredits    the largest credit grant a peer can make ({@code rdma.recv.buffers - 16})
     * @return the message type ({@link Wire#DATA} .. {@link Wire#TOPIC_CREDIT}, {@link Wire#UD_INFO}) if well formed, else a
     *     negative {@code ERR_*}
     */
    static int classify(final DirectBuffer buffer, final int offset, final int length, final int maxFrameBytes, final int maxCredits) {
        return classify(new ControlFlyweight().wrap(buffer, offset), length, maxFrameBytes, maxCredits);
    }

    /**
     * @param msg           the received message, wrapped at its start
     * @param length        bytes received (the work completion's byte length)
     * @param maxFrameBytes this node's largest bus frame ({@code rdma.frame.bytes})
     * @param maxCredits    the largest credit grant a peer can make ({@code rdma.recv.buffers - 16})
     * @return the message type ({@link Wire#DATA} .. {@link Wire#TOPIC_CREDIT}, {@link Wire#UD_INFO}) if well formed, else a
     *     negative {@code ERR_*}
     */
    static int classify(final ControlFlyweight msg, final int length, final int maxFrameBytes, final int maxCredits) {
        if (length < Wire.ENVELOPE_BYTES) {
            return ERR_TRUNCATED;
        }
        final int type = msg.type();
        if (type == Wire.DATA) {
            if (msg.topicId() == 0) {
                return ERR_TOPIC;
            }
            return length - Wire.ENVELOPE_BYTES > maxFrameBytes ? ERR_TOO_LONG : Wire.DATA;
        }
        if (type == Wire.RECOVERED) {
            if (msg.topicId() == 0) {
                return ERR_TOPIC;
            }
            final int frame = length - Wire.ENVELOPE_BYTES;
            return frame < FrameHeader.LENGTH ? ERR_TRUNCATED : frame > maxFrameBytes ? ERR_TOO_LONG : Wire.RECOVERED;
        }
        if (type == Wire.NAK) {
            return classifyNak(msg, length);
        }
        if (type == Wire.UD_INFO) {
            return length < Wire.CONTROL_MESSAGE_BYTES ? ERR_TRUNCATED : length > Wire.CONTROL_MESSAGE_BYTES ? ERR_TOO_LONG : Wire.UD_INFO;
        }
        if (type == Wire.RESUME || type == Wire.RESUME_FAILED || type == Wire.START) {
            return classifyResume(msg, length, type);
        }
        if (type == Wire.TOPIC_CREDIT) {
            return classifyTopicCredit(msg, length, maxCredits);
        }
        if (type < Wire.INIT || type > Wire.AUTH) {
            return ERR_TYPE;
        }
        final int expectedLength = type == Wire.AUTH ? Wire.AUTH_BYTES : Wire.CONTROL_MESSAGE_BYTES;
        if (length < expectedLength) {
            return ERR_TRUNCATED;
        }
        if (length > expectedLength) {
            return ERR_TOO_LONG;
        }
        return switch (type) {
            case Wire.INIT -> {
                final int credits = msg.credits();
                if (credits < 1 || credits > maxCredits) {
                    yield ERR_CREDITS;
                }
                yield msg.peerMaxFrame() < maxFrameBytes ? ERR_PEER_FRAME : Wire.INIT;
            }
            case Wire.CREDIT -> msg.credits() < 0 || msg.credits() > maxCredits ? ERR_CREDITS : Wire.CREDIT;
            case Wire.SUB, Wire.UNSUB -> msg.topicId() == 0 ? ERR_TOPIC : type;
            case Wire.AUTH -> Wire.AUTH;
            default -> Wire.BYE;
        };
    }

    private static int classifyTopicCredit(final ControlFlyweight msg, final int length, final int maxCredits) {
        if (length < Wire.CONTROL_MESSAGE_BYTES) {
            return ERR_TRUNCATED;
        }
        if (length > Wire.CONTROL_MESSAGE_BYTES) {
            return ERR_TOO_LONG;
        }
        if (msg.topicId() == 0) {
            return ERR_TOPIC;
        }
        if (msg.reserved() != 0) {
            return ERR_TYPE;
        }
        final int frames = msg.topicCreditFrames();
        return frames < 1 || frames > maxCredits ? ERR_CREDITS : Wire.TOPIC_CREDIT;
    }

    private static int classifyResume(final ControlFlyweight msg, final int length, final int type) {
        final int expectedLength = ControlFlyweight.lengthOf(type);
        if (length < expectedLength) {
            return ERR_TRUNCATED;
        }
        if (length > expectedLength) {
            return ERR_TOO_LONG;
        }
        if (msg.topicId() == 0) {
            return ERR_TOPIC;
        }
        if (msg.nextSequence() < 0) {
            return ERR_SEQUENCE;
        }
        if (type == Wire.RESUME || type == Wire.START) {
            return msg.reserved() != 0 ? ERR_SEQUENCE : type;
        }
        return msg.retentionFrames() < 1 || msg.oldestSequence() < -1 ? ERR_SEQUENCE : Wire.RESUME_FAILED;
    }

    private static int classifyNak(final ControlFlyweight msg, final int length) {
        if (length < Wire.NAK_BYTES) {
            return ERR_TRUNCATED;
        }
        if (length > Wire.NAK_BYTES) {
            return ERR_TOO_LONG;
        }
        if (msg.topicId() == 0) {
            return ERR_TOPIC;
        }
        final int count = msg.nakCount();
        return count < 1 || count > Wire.NAK_MAX_FRAMES || msg.nakFirst() < 0 ? ERR_SEQUENCE : Wire.NAK;
    }

    /**
     * @param code a {@link #classify} result
     * @return a short description for logs and counters
     */
    static String describe(final int code) {
        return switch (code) {
            case Wire.DATA -> "data";
            case Wire.INIT -> "init";
            case Wire.CREDIT -> "credit";
            case Wire.SUB -> "sub";
            case Wire.UNSUB -> "unsub";
            case Wire.BYE -> "bye";
            case Wire.AUTH -> "auth";
            case Wire.UD_INFO -> "ud-info";
            case Wire.RESUME -> "resume";
            case Wire.RESUME_FAILED -> "resume-failed";
            case Wire.START -> "start";
            case Wire.NAK -> "nak";
            case Wire.RECOVERED -> "recovered";
            case Wire.TOPIC_CREDIT -> "topic-credit";
            case ERR_SEQUENCE -> "resume, start or nak sequence, count, retention frames or reserved bytes out of range";
            case ERR_TRUNCATED -> "truncated message";
            case ERR_TYPE -> "unknown message type or reserved bytes set";
            case ERR_TOPIC -> "topic id 0";
            case ERR_TOO_LONG -> "message longer than allowed";
            case ERR_CREDITS -> "credit count out of range";
            case ERR_PEER_FRAME -> "peer's frame size is smaller than ours";
            default -> "unknown code " + code;
        };
    }
}
