package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import io.rdmabus.soak.fuzz.Fuzz;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes the rdma transport's RC message parser ({@link ControlMessages#classify}, the pure form of what the poller
 * does on a receive completion) with random and mutated envelopes at random lengths; checks it never throws, agrees
 * with a model written from {@link Wire}'s documented layout, and accepts every message the transport itself sends.
 * Also counts how many malformed messages the poller's inline parsing from before it called classify (modelled below)
 * would have acted on: what classify guards against.
 */
class ControlMessagesFuzzTest {
    private static final int MAX_FRAME = 16384;
    private static final int MAX_CREDITS = 112;

    /**
     * What the transport sends (RdmaTransport.sendControl / sendAuth / sendResumeMessage / RdmaPublication /
     * UdRecoveryServer): 16-byte control (TOPIC_CREDIT among them), 40-byte AUTH, 24-byte RESUME, START and NAK, 32-byte
     * RESUME_FAILED, 8-byte envelope + frame (DATA, RECOVERED).
     */
    private static byte[] wellFormed(final SplittableRandom rnd) {
        final int pick = rnd.nextInt(14);
        final int type = pick == 0 ? Wire.UD_INFO : pick == 11 ? Wire.NAK : pick == 12 ? Wire.RECOVERED : pick == 13 ? Wire.TOPIC_CREDIT : pick;
        final byte[] b = new byte[type == Wire.DATA || type == Wire.RECOVERED ? Wire.ENVELOPE_BYTES + 32 + rnd.nextInt(256)
            : type == Wire.AUTH ? Wire.AUTH_BYTES : type == Wire.RESUME ? Wire.RESUME_BYTES : type == Wire.START ? Wire.START_BYTES
            : type == Wire.NAK ? Wire.NAK_BYTES
            : type == Wire.RESUME_FAILED ? Wire.RESUME_FAILED_BYTES : Wire.CONTROL_MESSAGE_BYTES];
        final UnsafeBuffer v = new UnsafeBuffer(b);
        v.putInt(Wire.TYPE_OFFSET, type, ByteOrder.LITTLE_ENDIAN);
        final int arg = switch (type) {
            case Wire.INIT -> 1 + rnd.nextInt(MAX_CREDITS);
            case Wire.CREDIT -> rnd.nextInt(MAX_CREDITS + 1); // 0: the no-op that releases unsignalled sends
            case Wire.BYE, Wire.AUTH -> 0;
            default -> rnd.nextInt() | 1;
        };
        v.putInt(Wire.ARG_OFFSET, arg, ByteOrder.LITTLE_ENDIAN);
        if (type == Wire.TOPIC_CREDIT) {
            v.putInt(Wire.ARG2_OFFSET, 1 + rnd.nextInt(MAX_CREDITS), ByteOrder.LITTLE_ENDIAN); // frames of the window returned
        }
        if (type == Wire.INIT) {
            v.putInt(Wire.ARG2_OFFSET, MAX_FRAME + rnd.nextInt(2) * 1024, ByteOrder.LITTLE_ENDIAN);
        }
        if (type == Wire.RESUME || type == Wire.RESUME_FAILED || type == Wire.START) {
            v.putInt(Wire.ARG2_OFFSET, rnd.nextInt(), ByteOrder.LITTLE_ENDIAN); // session id: any value
            // START's first sequence: 0 (a session's start) as often as a later one
            v.putLong(Wire.NEXT_SEQUENCE_OFFSET, type == Wire.START && rnd.nextBoolean() ? 0 : rnd.nextLong(1L << 40), ByteOrder.LITTLE_ENDIAN);
        }
        if (type == Wire.NAK) {
            v.putInt(Wire.ARG2_OFFSET, rnd.nextInt(), ByteOrder.LITTLE_ENDIAN); // session id: any value
            v.putInt(Wire.ARG3_OFFSET, 1 + rnd.nextInt(Wire.NAK_MAX_FRAMES), ByteOrder.LITTLE_ENDIAN);
            v.putLong(Wire.NAK_FIRST_OFFSET, rnd.nextLong(1L << 40), ByteOrder.LITTLE_ENDIAN);
        }
        if (type == Wire.RESUME_FAILED) {
            v.putInt(Wire.ARG3_OFFSET, 1 + rnd.nextInt(65536), ByteOrder.LITTLE_ENDIAN);
            v.putLong(Wire.OLDEST_SEQUENCE_OFFSET, rnd.nextLong(1L << 40) - 1, ByteOrder.LITTLE_ENDIAN); // -1: session gone
        }
        return b;
    }

    /** The documented layout, written independently of ControlMessages. */
    private static int model(final byte[] b, final int length) {
        if (length < 8) {
            return ControlMessages.ERR_TRUNCATED;
        }
        final UnsafeBuffer v = new UnsafeBuffer(b);
        final int typeByte = b[0] & 0xFF;
        final boolean reservedZero = b[1] == 0 && b[2] == 0 && b[3] == 0;
        final int arg = v.getInt(4, ByteOrder.LITTLE_ENDIAN);
        if (reservedZero && typeByte == 0x20) { // UD_INFO: 16 bytes, no range check on its fields
            return length < 16 ? ControlMessages.ERR_TRUNCATED : length > 16 ? ControlMessages.ERR_TOO_LONG : 0x20;
        }
        if (reservedZero && typeByte == 13) { // TOPIC_CREDIT: 16 bytes, topic, 1..MAX_CREDITS frames, word 12 reserved
            if (length != 16) {
                return length < 16 ? ControlMessages.ERR_TRUNCATED : ControlMessages.ERR_TOO_LONG;
            }
            final int frames = v.getInt(8, ByteOrder.LITTLE_ENDIAN);
            return arg == 0 ? ControlMessages.ERR_TOPIC : v.getInt(12, ByteOrder.LITTLE_ENDIAN) != 0 ? ControlMessages.ERR_TYPE
                : frames < 1 || frames > MAX_CREDITS ? ControlMessages.ERR_CREDITS : 13;
        }
        if (!reservedZero || typeByte < 1 || typeByte > 12) {
            return ControlMessages.ERR_TYPE;
        }
        if (typeByte == 11) { // NAK: 24 bytes, topic not 0, count 1..1024 at 12, first sequence >= 0 at 16
            if (length != 24) {
                return length < 24 ? ControlMessages.ERR_TRUNCATED : ControlMessages.ERR_TOO_LONG;
            }
            if (arg == 0) {
                return ControlMessages.ERR_TOPIC;
            }
            final int count = v.getInt(12, ByteOrder.LITTLE_ENDIAN);
            return count < 1 || count > 1024 || v.getLong(16, ByteOrder.LITTLE_ENDIAN) < 0 ? ControlMessages.ERR_SEQUENCE : 11;
        }
        if (typeByte == 12) { // RECOVERED: envelope + a bus frame of 32..MAX_FRAME bytes
            return arg == 0 ? ControlMessages.ERR_TOPIC : length - 8 < 32 ? ControlMessages.ERR_TRUNCATED
                : length - 8 > MAX_FRAME ? ControlMessages.ERR_TOO_LONG : 12;
        }
        if (typeByte == 8 || typeByte == 9 || typeByte == 10) { // RESUME 24 bytes, RESUME_FAILED 32 bytes, START 24 bytes
            final int fixed = typeByte == 9 ? 32 : 24;
            if (length != fixed) {
                return length < fixed ? ControlMessages.ERR_TRUNCATED : ControlMessages.ERR_TOO_LONG;
            }
            if (arg == 0) {
                return ControlMessages.ERR_TOPIC;
            }
            final int word12 = v.getInt(12, ByteOrder.LITTLE_ENDIAN);
            if (v.getLong(16, ByteOrder.LITTLE_ENDIAN) < 0) {
                return ControlMessages.ERR_SEQUENCE;
            }
            if (typeByte == 8 || typeByte == 10) { // RESUME, START: the word at 12 is reserved
                return word12 != 0 ? ControlMessages.ERR_SEQUENCE : typeByte;
            }
            return word12 < 1 || v.getLong(24, ByteOrder.LITTLE_ENDIAN) < -1 ? ControlMessages.ERR_SEQUENCE : 9;
        }
        if (typeByte == 1) {
            return arg == 0 ? ControlMessages.ERR_TOPIC : length - 8 > MAX_FRAME ? ControlMessages.ERR_TOO_LONG : 1;
        }
        final int fixed = typeByte == 7 ? 40 : 16;
        if (length != fixed) {
            return length < fixed ? ControlMessages.ERR_TRUNCATED : ControlMessages.ERR_TOO_LONG;
        }
        switch (typeByte) {
            case 2:
                if (arg < 1 || arg > MAX_CREDITS) {
                    return ControlMessages.ERR_CREDITS;
                }
                return v.getInt(8, ByteOrder.LITTLE_ENDIAN) < MAX_FRAME ? ControlMessages.ERR_PEER_FRAME : 2;
            case 3:
                return arg < 0 || arg > MAX_CREDITS ? ControlMessages.ERR_CREDITS : 3;
            case 4:
            case 5:
                return arg == 0 ? ControlMessages.ERR_TOPIC : typeByte;
            case 7:
                return 7;
            default:
                return 6;
        }
    }

    /** The poller's inline parsing before it called classify (commit 20d9831): true if it would have acted on the message. */
    private static boolean inlineActsOn(final byte[] b) {
        final UnsafeBuffer v = new UnsafeBuffer(b);
        final int type = v.getInt(0, ByteOrder.LITTLE_ENDIAN);
        return type >= Wire.DATA && type <= Wire.AUTH; // no length, credit-range or topic check
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void classifyNeverThrowsMatchesTheLayoutAndAcceptsWhatTheTransportSends() {
        final Fuzz fuzz = Fuzz.start("rdma ControlMessages.classify");
        final int[] byCode = new int[Wire.UD_INFO + 8];
        long inlineWouldActOnMalformed = 0;
        long malformed = 0;
        while (fuzz.more()) {
            final SplittableRandom rnd = fuzz.nextCase();
            byte[] msg = wellFormed(rnd);
            final int mode = rnd.nextInt(4);
            if (mode == 0) {
                final UnsafeBuffer v = new UnsafeBuffer(msg);
                assertEquals(v.getInt(0, ByteOrder.LITTLE_ENDIAN), ControlMessages.classify(v, 0, msg.length, MAX_FRAME, MAX_CREDITS),
                    fuzz.fail("a message the transport sends was rejected"));
            } else if (mode == 1) {
                Fuzz.mutate(rnd, msg, 1 + rnd.nextInt(3));
            } else if (mode == 2) {
                msg = Fuzz.bytes(rnd, rnd.nextInt(40));
            }
            // the receive slot is bigger than the message; the work completion's length may be anything up to it
            final int length = mode == 3 ? rnd.nextInt(msg.length + 1) : msg.length;
            final byte[] slot = java.util.Arrays.copyOf(msg, Math.max(msg.length, Wire.CONTROL_BYTES) + 64);
            final int at = rnd.nextInt(4) * 8;
            final byte[] shifted = new byte[slot.length + at];
            System.arraycopy(slot, 0, shifted, at, slot.length);
            final int code;
            try {
                code = ControlMessages.classify(new UnsafeBuffer(shifted), at, length, MAX_FRAME, MAX_CREDITS);
            } catch (final RuntimeException ex) {
                throw new AssertionError(fuzz.fail("classify threw for length " + length), ex);
            }
            final int expected = model(slot, length);
            if (code != expected) {
                fail(fuzz.fail("classify said " + ControlMessages.describe(code) + ", the layout says " + ControlMessages.describe(expected)
                    + " for " + length + " bytes " + java.util.HexFormat.of().formatHex(slot, 0, Math.min(length, 16))));
            }
            assertTrue(!ControlMessages.describe(code).startsWith("unknown code"), fuzz.fail("undescribed code " + code));
            byCode[code + 7]++;
            if (code < 0) {
                malformed++;
                if (inlineActsOn(slot)) {
                    inlineWouldActOnMalformed++;
                }
            }
        }
        System.out.println(fuzz.summary("byCode(-7..32)=" + java.util.Arrays.toString(byCode) + " malformed=" + malformed
            + " malformedTheInlinePollerParsingWouldActOn=" + inlineWouldActOnMalformed));
        assertTrue(malformed > 0 && byCode[Wire.CREDIT + 7] > 0 && byCode[Wire.DATA + 7] > 0 && byCode[Wire.RESUME + 7] > 0
            && byCode[Wire.RESUME_FAILED + 7] > 0 && byCode[Wire.START + 7] > 0 && byCode[Wire.NAK + 7] > 0
            && byCode[Wire.RECOVERED + 7] > 0 && byCode[Wire.TOPIC_CREDIT + 7] > 0
            && byCode[ControlMessages.ERR_SEQUENCE + 7] > 0, fuzz.fail("generator too narrow"));
    }
}
