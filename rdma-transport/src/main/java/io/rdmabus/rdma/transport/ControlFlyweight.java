package io.rdmabus.rdma.transport;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * A flyweight over one RC message in a buffer (the {@link Wire} envelope and the control messages after it), in the
 * shape of Aeron's {@code io.aeron.protocol} flyweights: {@link #wrap} it over a buffer at an offset, then read or write
 * the message through typed accessors named after its fields, or encode a whole message with one of the
 * {@code encode*} methods (each writes every byte of its message, reserved ones 0, and returns its length). No
 * allocation, no copies; nothing is checked here ({@link ControlMessages#classify} bounds-checks a received message
 * before anything reads its fields).
 *
 * <p>Layout (little-endian; offsets from the message start):
 * <pre>
 *  0  i32  type               DATA, INIT, CREDIT, SUB, UNSUB, BYE, AUTH, RESUME, RESUME_FAILED, START, NAK, RECOVERED,
 *                             TOPIC_CREDIT, UD_INFO (high 3 bytes 0)
 *  4  i32  topic id           DATA, SUB, UNSUB, RESUME, RESUME_FAILED, START, NAK, RECOVERED, TOPIC_CREDIT
 *          credits            INIT (granted at start), CREDIT (returned)
 *          UD QP number       UD_INFO
 *  8  i32  peer max frame     INIT: the sender's rdma.frame.bytes
 *          session id         RESUME, RESUME_FAILED, START, NAK: the publisher's bus session
 *          UD IPv4 address    UD_INFO
 *          frames returned    TOPIC_CREDIT: 1..the window the subscriber granted
 *          proof (32 bytes)   AUTH: HMAC-SHA256 from offset 8 on
 * 12  i32  reserved 0         INIT, CREDIT, SUB, UNSUB, BYE, RESUME, START, TOPIC_CREDIT
 *          retention frames   RESUME_FAILED: the publisher's rdma.retention.frames
 *          count              NAK: frames missing, 1..1024
 *          UD Q_Key           UD_INFO
 * 16  i64  next sequence      RESUME, RESUME_FAILED: the next sequence the subscriber needs
 *          first sequence     START: no frame of the session on this connection is older
 *          first sequence     NAK: the first missing sequence
 * 24  i64  oldest sequence    RESUME_FAILED: the oldest sequence the publisher retains (-1: session gone)
 * </pre>
 *
 * <p>Owner: whoever holds the instance; each thread that reads or writes messages keeps its own (the poller one for
 * receives and one for control sends, each publication one for its DATA envelopes).
 */
final class ControlFlyweight {
    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    private DirectBuffer buffer;
    /** The same buffer when wrapped for writing, else null. */
    private MutableDirectBuffer mutable;
    private int offset;

    /** Wraps a received message for reading. @return this */
    ControlFlyweight wrap(final DirectBuffer buffer, final int offset) {
        this.buffer = buffer;
        this.mutable = null;
        this.offset = offset;
        return this;
    }

    /** Wraps a message slot for writing (and reading). @return this */
    ControlFlyweight wrap(final MutableDirectBuffer buffer, final int offset) {
        this.buffer = buffer;
        this.mutable = buffer;
        this.offset = offset;
        return this;
    }

    /** @return the buffer the flyweight is wrapped over */
    DirectBuffer buffer() {
        return buffer;
    }

    /** @return the offset the flyweight is wrapped at */
    int offset() {
        return offset;
    }

    // ------------------------------------------------------------------------------------------------------- reading

    /** @return the type word (a {@link Wire} type; a value with its high bytes set is no type) */
    int type() {
        return buffer.getInt(offset + Wire.TYPE_OFFSET, ORDER);
    }

    /** @return the topic id of DATA, SUB, UNSUB, RESUME, RESUME_FAILED */
    int topicId() {
        return buffer.getInt(offset + Wire.ARG_OFFSET, ORDER);
    }

    /** @return the credits of INIT (granted) or CREDIT (returned) */
    int credits() {
        return buffer.getInt(offset + Wire.ARG_OFFSET, ORDER);
    }

    /** @return INIT: the sender's largest frame in bytes */
    int peerMaxFrame() {
        return buffer.getInt(offset + Wire.ARG2_OFFSET, ORDER);
    }

    /** @return TOPIC_CREDIT: the frames of the topic's window returned */
    int topicCreditFrames() {
        return buffer.getInt(offset + Wire.ARG2_OFFSET, ORDER);
    }

    /** @return RESUME, RESUME_FAILED, START: the publisher's session id */
    int sessionId() {
        return buffer.getInt(offset + Wire.ARG2_OFFSET, ORDER);
    }

    /** @return the word at offset 12: reserved (0) in RESUME and START */
    int reserved() {
        return buffer.getInt(offset + Wire.ARG3_OFFSET, ORDER);
    }

    /** @return RESUME_FAILED: the publisher's {@code rdma.retention.frames} */
    int retentionFrames() {
        return buffer.getInt(offset + Wire.ARG3_OFFSET, ORDER);
    }

    /** @return RESUME, RESUME_FAILED: the next sequence the subscriber needs */
    long nextSequence() {
        return buffer.getLong(offset + Wire.NEXT_SEQUENCE_OFFSET, ORDER);
    }

    /** @return START: the first sequence of the session's stream on this connection (the same word as {@link #nextSequence}) */
    long firstSequence() {
        return buffer.getLong(offset + Wire.NEXT_SEQUENCE_OFFSET, ORDER);
    }

    /** @return RESUME_FAILED: the oldest sequence the publisher retains (-1: the session is gone) */
    long oldestSequence() {
        return buffer.getLong(offset + Wire.OLDEST_SEQUENCE_OFFSET, ORDER);
    }

    /** @return NAK: the number of missing frames */
    int nakCount() {
        return buffer.getInt(offset + Wire.ARG3_OFFSET, ORDER);
    }

    /** @return NAK: the first missing sequence */
    long nakFirst() {
        return buffer.getLong(offset + Wire.NAK_FIRST_OFFSET, ORDER);
    }

    /** @return UD_INFO: the sender's UD QP number */
    int udQpn() {
        return buffer.getInt(offset + Wire.ARG_OFFSET, ORDER);
    }

    /** @return UD_INFO: the sender's IPv4 address */
    int udIpv4() {
        return buffer.getInt(offset + Wire.ARG2_OFFSET, ORDER);
    }

    /** @return UD_INFO: the Q_Key the sender's QP accepts */
    int udQkey() {
        return buffer.getInt(offset + Wire.ARG3_OFFSET, ORDER);
    }

    /** Copies AUTH's proof into {@code dst} ({@link PeerAuth#PROOF_BYTES} long). */
    void getProof(final byte[] dst) {
        buffer.getBytes(offset + Wire.ENVELOPE_BYTES, dst);
    }

    /** @return the offset of the bus frame after a DATA envelope */
    int frameOffset() {
        return offset + Wire.ENVELOPE_BYTES;
    }

    // ------------------------------------------------------------------------------------------------------- writing

    /** Writes a DATA envelope for {@code topicId} (the frame follows at {@link #frameOffset}). @return the envelope's length */
    int data(final int topicId) {
        return envelope(Wire.DATA, topicId);
    }

    /** Writes a RECOVERED envelope for {@code topicId} (the frame follows at {@link #frameOffset}). @return the envelope's length */
    int recovered(final int topicId) {
        return envelope(Wire.RECOVERED, topicId);
    }

    /** @return the length of NAK of {@code count} frames of session {@code sessionId} of {@code topicId} from {@code first} on */
    int encodeNak(final int topicId, final int sessionId, final long first, final int count) {
        fixed(Wire.NAK, topicId, sessionId, count);
        mutable.putLong(offset + Wire.NAK_FIRST_OFFSET, first, ORDER);
        return Wire.NAK_BYTES;
    }

    /** @return the length of INIT granting {@code credits} and announcing {@code maxFrame} */
    int encodeInit(final int credits, final int maxFrame) {
        return fixed(Wire.INIT, credits, maxFrame, 0);
    }

    /** @return the length of CREDIT returning {@code credits} (0: a signalled no-op, the keepalive and tail release) */
    int encodeCredit(final int credits) {
        return fixed(Wire.CREDIT, credits, 0, 0);
    }

    /** @return the length of TOPIC_CREDIT returning {@code frames} of the window of {@code topicId} */
    int encodeTopicCredit(final int topicId, final int frames) {
        return fixed(Wire.TOPIC_CREDIT, topicId, frames, 0);
    }

    /** @return the length of SUB of {@code topicId} */
    int encodeSub(final int topicId) {
        return fixed(Wire.SUB, topicId, 0, 0);
    }

    /** @return the length of UNSUB of {@code topicId} */
    int encodeUnsub(final int topicId) {
        return fixed(Wire.UNSUB, topicId, 0, 0);
    }

    /** @return the length of BYE */
    int encodeBye() {
        return fixed(Wire.BYE, 0, 0, 0);
    }

    /** @return the length of UD_INFO with the sender's UD address */
    int encodeUdInfo(final int qpn, final int ipv4, final int qkey) {
        return fixed(Wire.UD_INFO, qpn, ipv4, qkey);
    }

    /** @return the length of AUTH carrying {@code proof} ({@link PeerAuth#PROOF_BYTES} long) */
    int encodeAuth(final byte[] proof) {
        envelope(Wire.AUTH, 0);
        mutable.putBytes(offset + Wire.ENVELOPE_BYTES, proof);
        return Wire.AUTH_BYTES;
    }

    /** @return the length of RESUME of session {@code sessionId} of {@code topicId} from {@code nextSequence} on */
    int encodeResume(final int topicId, final int sessionId, final long nextSequence) {
        fixed(Wire.RESUME, topicId, sessionId, 0);
        mutable.putLong(offset + Wire.NEXT_SEQUENCE_OFFSET, nextSequence, ORDER);
        return Wire.RESUME_BYTES;
    }

    /** @return the length of START: this connection's stream of session {@code sessionId} of {@code topicId} starts at {@code firstSequence} */
    int encodeStart(final int topicId, final int sessionId, final long firstSequence) {
        fixed(Wire.START, topicId, sessionId, 0);
        mutable.putLong(offset + Wire.NEXT_SEQUENCE_OFFSET, firstSequence, ORDER);
        return Wire.START_BYTES;
    }

    /** @return the length of RESUME_FAILED answering a RESUME of {@code nextSequence} when the publisher retains from {@code oldestSequence} */
    int encodeResumeFailed(final int topicId, final int sessionId, final int retentionFrames, final long nextSequence,
                           final long oldestSequence) {
        fixed(Wire.RESUME_FAILED, topicId, sessionId, retentionFrames);
        mutable.putLong(offset + Wire.NEXT_SEQUENCE_OFFSET, nextSequence, ORDER);
        mutable.putLong(offset + Wire.OLDEST_SEQUENCE_OFFSET, oldestSequence, ORDER);
        return Wire.RESUME_FAILED_BYTES;
    }

    private int envelope(final int type, final int arg) {
        mutable.putInt(offset + Wire.TYPE_OFFSET, type, ORDER);
        mutable.putInt(offset + Wire.ARG_OFFSET, arg, ORDER);
        return Wire.ENVELOPE_BYTES;
    }

    private int fixed(final int type, final int arg, final int arg2, final int arg3) {
        envelope(type, arg);
        mutable.putInt(offset + Wire.ARG2_OFFSET, arg2, ORDER);
        mutable.putInt(offset + Wire.ARG3_OFFSET, arg3, ORDER);
        return Wire.CONTROL_MESSAGE_BYTES;
    }

    /**
     * @param type a control message type
     * @return the length of a message of that type as this node sends it
     */
    static int lengthOf(final int type) {
        return switch (type) {
            case Wire.AUTH -> Wire.AUTH_BYTES;
            case Wire.RESUME -> Wire.RESUME_BYTES;
            case Wire.START -> Wire.START_BYTES;
            case Wire.RESUME_FAILED -> Wire.RESUME_FAILED_BYTES;
            case Wire.NAK -> Wire.NAK_BYTES;
            default -> Wire.CONTROL_MESSAGE_BYTES;
        };
    }
}
