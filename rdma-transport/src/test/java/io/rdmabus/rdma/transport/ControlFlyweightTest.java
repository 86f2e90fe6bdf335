package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The RC message flyweight and the pending-control queue on a host: every message this node encodes is one the receive
 * side's classifier accepts, at the length the flyweight reports, with its fields read back through the same flyweight
 * at any offset; the bytes are the layout {@link Wire} documents; the queue keeps its messages in order across
 * wrap-around and growth.
 */
class ControlFlyweightTest {
    private static final int MAX_FRAME = 16384;
    private static final int MAX_CREDITS = 112;

    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
    private final ControlFlyweight msg = new ControlFlyweight();

    private int classify(final int offset, final int length) {
        return ControlMessages.classify(new ControlFlyweight().wrap(buffer, offset), length, MAX_FRAME, MAX_CREDITS);
    }

    @Test
    void everyEncodedMessageClassifiesAsItsTypeAndReadsBack() {
        for (int at : new int[] {0, 8, 100}) {
            assertEquals(Wire.INIT, classify(at, msg.wrap(buffer, at).encodeInit(MAX_CREDITS, MAX_FRAME)));
            assertEquals(List.of(MAX_CREDITS, MAX_FRAME), List.of(msg.credits(), msg.peerMaxFrame()));
            assertEquals(Wire.CREDIT, classify(at, msg.wrap(buffer, at).encodeCredit(0)), "CREDIT 0: the keepalive");
            assertEquals(0, msg.credits());
            assertEquals(Wire.SUB, classify(at, msg.wrap(buffer, at).encodeSub(-5)));
            assertEquals(-5, msg.topicId());
            assertEquals(Wire.UNSUB, classify(at, msg.wrap(buffer, at).encodeUnsub(77)));
            assertEquals(77, msg.topicId());
            assertEquals(Wire.BYE, classify(at, msg.wrap(buffer, at).encodeBye()));
            assertEquals(Wire.UD_INFO, classify(at, msg.wrap(buffer, at).encodeUdInfo(0x1234, 0x0A4D000B, 0x11)));
            assertEquals(List.of(0x1234, 0x0A4D000B, 0x11), List.of(msg.udQpn(), msg.udIpv4(), msg.udQkey()));
            byte[] proof = new byte[PeerAuth.PROOF_BYTES];
            for (int i = 0; i < proof.length; i++) {
                proof[i] = (byte) (i * 7 + at);
            }
            assertEquals(Wire.AUTH, classify(at, msg.wrap(buffer, at).encodeAuth(proof)));
            byte[] got = new byte[PeerAuth.PROOF_BYTES];
            msg.getProof(got);
            assertArrayEquals(proof, got);
            assertEquals(Wire.RESUME, classify(at, msg.wrap(buffer, at).encodeResume(9, -3, 1L << 40)));
            assertEquals(List.of(9L, -3L, 1L << 40, 0L), List.of((long) msg.topicId(), (long) msg.sessionId(), msg.nextSequence(),
                (long) msg.reserved()));
            assertEquals(Wire.RESUME_FAILED, classify(at, msg.wrap(buffer, at).encodeResumeFailed(9, 4, 256, 10, -1)));
            assertEquals(List.of(9L, 4L, 256L, 10L, -1L), List.of((long) msg.topicId(), (long) msg.sessionId(), (long) msg.retentionFrames(),
                msg.nextSequence(), msg.oldestSequence()));
            assertEquals(Wire.START, classify(at, msg.wrap(buffer, at).encodeStart(11, -7, 0)), "START from a session's first sequence");
            assertEquals(List.of(11L, -7L, 0L, 0L), List.of((long) msg.topicId(), (long) msg.sessionId(), msg.firstSequence(),
                (long) msg.reserved()));
            assertEquals(Wire.START, classify(at, msg.wrap(buffer, at).encodeStart(12, 5, (1L << 40) + 3)));
            assertEquals((1L << 40) + 3, msg.firstSequence());
            assertEquals(Wire.NAK, classify(at, msg.wrap(buffer, at).encodeNak(9, -3, 1L << 40, Wire.NAK_MAX_FRAMES)));
            assertEquals(List.of(9L, -3L, 1L << 40, (long) Wire.NAK_MAX_FRAMES), List.of((long) msg.topicId(), (long) msg.sessionId(),
                msg.nakFirst(), (long) msg.nakCount()));
            assertEquals(Wire.ENVELOPE_BYTES, msg.wrap(buffer, at).recovered(43));
            assertEquals(Wire.RECOVERED, classify(at, Wire.ENVELOPE_BYTES + 32));
            assertEquals(List.of(43, at + Wire.ENVELOPE_BYTES), List.of(msg.topicId(), msg.frameOffset()));
            assertEquals(Wire.ENVELOPE_BYTES, msg.wrap(buffer, at).data(42));
            assertEquals(Wire.DATA, classify(at, Wire.ENVELOPE_BYTES + 32));
            assertEquals(List.of(42, at + Wire.ENVELOPE_BYTES), List.of(msg.topicId(), msg.frameOffset()));
        }
    }

    @Test
    void theBytesAreTheDocumentedLayout() {
        buffer.setMemory(0, buffer.capacity(), (byte) 0x5A);
        int length = msg.wrap(buffer, 0).encodeResumeFailed(0x01020304, 0x0A0B0C0D, 512, 1000, 900);
        assertEquals(Wire.RESUME_FAILED_BYTES, length);
        assertEquals(Wire.RESUME_FAILED, buffer.getInt(0, ByteOrder.LITTLE_ENDIAN), "type word, high bytes 0");
        assertEquals(0x01020304, buffer.getInt(4, ByteOrder.LITTLE_ENDIAN), "topic id at 4");
        assertEquals(0x0A0B0C0D, buffer.getInt(8, ByteOrder.LITTLE_ENDIAN), "session id at 8");
        assertEquals(512, buffer.getInt(12, ByteOrder.LITTLE_ENDIAN), "retention frames at 12");
        assertEquals(1000, buffer.getLong(16, ByteOrder.LITTLE_ENDIAN), "next sequence at 16");
        assertEquals(900, buffer.getLong(24, ByteOrder.LITTLE_ENDIAN), "oldest sequence at 24");
        buffer.setMemory(0, buffer.capacity(), (byte) 0x5A);
        assertEquals(Wire.CONTROL_MESSAGE_BYTES, msg.wrap(buffer, 0).encodeSub(3));
        assertEquals(List.of(Wire.SUB, 3, 0, 0), List.of(buffer.getInt(0, ByteOrder.LITTLE_ENDIAN), buffer.getInt(4, ByteOrder.LITTLE_ENDIAN),
            buffer.getInt(8, ByteOrder.LITTLE_ENDIAN), buffer.getInt(12, ByteOrder.LITTLE_ENDIAN)), "SUB: every word written, reserved ones 0");
    }

    @Test
    void startIsTheDocumentedLayoutAndItsBoundsAreChecked() {
        buffer.setMemory(0, buffer.capacity(), (byte) 0x5A);
        assertEquals(Wire.START_BYTES, msg.wrap(buffer, 0).encodeStart(0x01020304, 0x0A0B0C0D, 1000));
        assertEquals(List.of(10, 0x01020304, 0x0A0B0C0D, 0), List.of(buffer.getInt(0, ByteOrder.LITTLE_ENDIAN),
            buffer.getInt(4, ByteOrder.LITTLE_ENDIAN), buffer.getInt(8, ByteOrder.LITTLE_ENDIAN), buffer.getInt(12, ByteOrder.LITTLE_ENDIAN)),
            "type 10, topic id at 4, session id at 8, reserved 0 at 12");
        assertEquals(1000, buffer.getLong(16, ByteOrder.LITTLE_ENDIAN), "first sequence at 16");
        assertEquals(Wire.START, classify(0, Wire.START_BYTES));
        assertEquals(ControlMessages.ERR_TRUNCATED, classify(0, Wire.START_BYTES - 1), "one byte short");
        assertEquals(ControlMessages.ERR_TOO_LONG, classify(0, Wire.START_BYTES + 8), "longer than START");
        msg.wrap(buffer, 0).encodeStart(0, 1, 5);
        assertEquals(ControlMessages.ERR_TOPIC, classify(0, Wire.START_BYTES), "topic id 0");
        msg.wrap(buffer, 0).encodeStart(3, 1, -1);
        assertEquals(ControlMessages.ERR_SEQUENCE, classify(0, Wire.START_BYTES), "negative first sequence");
        msg.wrap(buffer, 0).encodeStart(3, 1, 5);
        buffer.putInt(12, 1, ByteOrder.LITTLE_ENDIAN);
        assertEquals(ControlMessages.ERR_SEQUENCE, classify(0, Wire.START_BYTES), "reserved word set");
        msg.wrap(buffer, 0).encodeStart(3, 1, 5);
        buffer.putInt(0, Wire.START | 0x100, ByteOrder.LITTLE_ENDIAN);
        assertEquals(ControlMessages.ERR_TYPE, classify(0, Wire.START_BYTES), "START's type word with a high byte set");
    }

    @Test
    void nakAndRecoveredAreBoundsChecked() {
        assertEquals(Wire.NAK_BYTES, msg.wrap(buffer, 0).encodeNak(5, 6, 100, 3));
        assertEquals(List.of(Wire.NAK, 5, 6, 3), List.of(buffer.getInt(0, ByteOrder.LITTLE_ENDIAN), buffer.getInt(4, ByteOrder.LITTLE_ENDIAN),
            buffer.getInt(8, ByteOrder.LITTLE_ENDIAN), buffer.getInt(12, ByteOrder.LITTLE_ENDIAN)), "NAK: type, topic, session, count");
        assertEquals(100, buffer.getLong(16, ByteOrder.LITTLE_ENDIAN), "NAK: first sequence at 16");
        assertEquals(ControlMessages.ERR_TRUNCATED, classify(0, Wire.NAK_BYTES - 1));
        assertEquals(ControlMessages.ERR_TOO_LONG, classify(0, Wire.NAK_BYTES + 1));
        msg.encodeNak(5, 6, 100, 0);
        assertEquals(ControlMessages.ERR_SEQUENCE, classify(0, Wire.NAK_BYTES), "count 0");
        msg.encodeNak(5, 6, 100, Wire.NAK_MAX_FRAMES + 1);
        assertEquals(ControlMessages.ERR_SEQUENCE, classify(0, Wire.NAK_BYTES), "count above the bound");
        msg.encodeNak(5, 6, -1, 1);
        assertEquals(ControlMessages.ERR_SEQUENCE, classify(0, Wire.NAK_BYTES), "negative first sequence");
        msg.encodeNak(0, 6, 1, 1);
        assertEquals(ControlMessages.ERR_TOPIC, classify(0, Wire.NAK_BYTES), "topic 0");
        msg.wrap(buffer, 0).recovered(7);
        assertEquals(ControlMessages.ERR_TRUNCATED, classify(0, Wire.ENVELOPE_BYTES + 31), "RECOVERED shorter than a frame header");
        assertEquals(ControlMessages.ERR_TOO_LONG, classify(0, Wire.ENVELOPE_BYTES + MAX_FRAME + 1));
        msg.recovered(0);
        assertEquals(ControlMessages.ERR_TOPIC, classify(0, Wire.ENVELOPE_BYTES + 32));
    }

    @Test
    void topicCreditIsTheDocumentedLayoutAndItsBoundsAreChecked() {
        for (int at : new int[] {0, 8, 100}) {
            assertEquals(Wire.TOPIC_CREDIT, classify(at, msg.wrap(buffer, at).encodeTopicCredit(-9, MAX_CREDITS)));
            assertEquals(List.of(-9, MAX_CREDITS, 0), List.of(msg.topicId(), msg.topicCreditFrames(), msg.reserved()));
        }
        buffer.setMemory(0, buffer.capacity(), (byte) 0x5A);
        assertEquals(Wire.CONTROL_MESSAGE_BYTES, msg.wrap(buffer, 0).encodeTopicCredit(0x01020304, 28));
        assertEquals(List.of(13, 0x01020304, 28, 0), List.of(buffer.getInt(0, ByteOrder.LITTLE_ENDIAN),
            buffer.getInt(4, ByteOrder.LITTLE_ENDIAN), buffer.getInt(8, ByteOrder.LITTLE_ENDIAN), buffer.getInt(12, ByteOrder.LITTLE_ENDIAN)),
            "type 13, topic id at 4, frames at 8, reserved 0 at 12");
        assertEquals(ControlMessages.ERR_TRUNCATED, classify(0, Wire.CONTROL_MESSAGE_BYTES - 1), "one byte short");
        assertEquals(ControlMessages.ERR_TOO_LONG, classify(0, Wire.CONTROL_MESSAGE_BYTES + 8), "longer than TOPIC_CREDIT");
        msg.wrap(buffer, 0).encodeTopicCredit(0, 1);
        assertEquals(ControlMessages.ERR_TOPIC, classify(0, Wire.CONTROL_MESSAGE_BYTES), "topic id 0");
        msg.wrap(buffer, 0).encodeTopicCredit(3, 0);
        assertEquals(ControlMessages.ERR_CREDITS, classify(0, Wire.CONTROL_MESSAGE_BYTES), "no frames returned");
        msg.wrap(buffer, 0).encodeTopicCredit(3, MAX_CREDITS + 1);
        assertEquals(ControlMessages.ERR_CREDITS, classify(0, Wire.CONTROL_MESSAGE_BYTES), "more frames than any window");
        msg.wrap(buffer, 0).encodeTopicCredit(3, 1);
        buffer.putInt(12, 1, ByteOrder.LITTLE_ENDIAN);
        assertEquals(ControlMessages.ERR_TYPE, classify(0, Wire.CONTROL_MESSAGE_BYTES), "reserved word set");
        msg.wrap(buffer, 0).encodeTopicCredit(3, 1);
        buffer.putInt(0, Wire.TOPIC_CREDIT | 0x100, ByteOrder.LITTLE_ENDIAN);
        assertEquals(ControlMessages.ERR_TYPE, classify(0, Wire.CONTROL_MESSAGE_BYTES), "type word with a high byte set");
    }

    @Test
    void theQueueKeepsItsMessagesInOrderAcrossWrapAndGrowth() {
        ControlQueue q = new ControlQueue();
        List<String> expected = new ArrayList<>();
        List<String> got = new ArrayList<>();
        int n = 1; // topic id 0 is malformed
        for (int round = 0; round < 6; round++) {
            int add = 3 + round * 7; // past the initial capacity on later rounds, while entries wrap
            for (int i = 0; i < add; i++, n++) {
                switch (n % 7) {
                    case 0 -> q.sub(n);
                    case 1 -> q.unsub(n);
                    case 2 -> q.udInfo(n, n + 1, n + 2);
                    case 3 -> q.resume(n, n + 1, n + 2L);
                    case 4 -> q.resumeFailed(n, n + 1, n + 2, n + 3L, n - 1L);
                    case 5 -> q.start(n, n + 1, n + 4L);
                    default -> q.nak(n, n + 1, n + 2L, 1 + n % Wire.NAK_MAX_FRAMES);
                }
                expected.add(n % 7 + ":" + n);
            }
            for (int i = 0; i < add - 2 && !q.isEmpty(); i++) {
                got.add(take(q));
            }
        }
        while (!q.isEmpty()) {
            got.add(take(q));
        }
        assertEquals(expected, got);
        assertEquals(0, q.size());
    }

    /** Copies the head entry out as the sender does, checks it classifies at its length, and returns "kind:topic". */
    private String take(final ControlQueue q) {
        int length = q.headLength();
        UnsafeBuffer slot = new UnsafeBuffer(new byte[Wire.CONTROL_BYTES]);
        slot.putBytes(0, q.buffer(), q.headOffset(), length);
        ControlFlyweight m = new ControlFlyweight().wrap(slot, 0);
        int type = ControlMessages.classify(m, length, MAX_FRAME, MAX_CREDITS);
        assertTrue(type > 0, "queued message classifies: " + ControlMessages.describe(type));
        q.poll();
        int kind = switch (type) {
            case Wire.SUB -> 0;
            case Wire.UNSUB -> 1;
            case Wire.UD_INFO -> 2;
            case Wire.RESUME -> 3;
            case Wire.RESUME_FAILED -> 4;
            case Wire.START -> 5;
            default -> 6;
        };
        int topic = type == Wire.UD_INFO ? m.udQpn() : m.topicId();
        if (type == Wire.RESUME_FAILED) {
            assertEquals(List.of(topic + 1, topic + 2, (long) topic + 3, (long) topic - 1), List.of(m.sessionId(), m.retentionFrames(),
                m.nextSequence(), m.oldestSequence()));
        }
        if (type == Wire.START) {
            assertEquals(List.of((long) topic + 1, (long) topic + 4), List.of((long) m.sessionId(), m.firstSequence()));
        }
        if (type == Wire.NAK) {
            assertEquals(List.of((long) topic + 1, (long) topic + 2, 1L + topic % Wire.NAK_MAX_FRAMES), List.of((long) m.sessionId(),
                m.nakFirst(), (long) m.nakCount()));
        }
        return kind + ":" + topic;
    }
}
