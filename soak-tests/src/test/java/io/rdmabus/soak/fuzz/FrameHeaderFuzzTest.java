package io.rdmabus.soak.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import io.rdmabus.frame.FrameHeader;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes {@link FrameHeader#validate} against an independent model of {@code docs/wire-format.md}: random and
 * mutated frames at random offsets and lengths; validate never throws, and accepts a frame exactly when every
 * documented receive rule holds.
 */
class FrameHeaderFuzzTest {

    /** The receive rules of docs/wire-format.md, written from the document, not from the code. */
    static boolean modelAccepts(final byte[] b, final int off, final int len, final int maxFrame) {
        if (len < 32 || len > maxFrame) {
            return false;
        }
        final UnsafeBuffer v = new UnsafeBuffer(b);
        final int version = b[off] & 0xFF;
        final int type = b[off + 1] & 0xFF;
        final int flags = v.getShort(off + 2, ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        final int frameLength = v.getInt(off + 4, ByteOrder.LITTLE_ENDIAN);
        final long sequence = v.getLong(off + 16, ByteOrder.LITTLE_ENDIAN);
        // flags: BEGIN 0x80 and END 0x40 only; none set = a middle fragment
        return version == 1 && type == 1 && (flags & ~0xC0) == 0 && frameLength == len && sequence >= 0;
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void validateNeverThrowsAndMatchesTheDocumentedRules() {
        final Fuzz fuzz = Fuzz.start("FrameHeader.validate");
        long accepted = 0;
        long rejected = 0;
        final int[] codes = new int[8];
        while (fuzz.more()) {
            final SplittableRandom rnd = fuzz.nextCase();
            final int payload = rnd.nextInt(4) == 0 ? rnd.nextInt(4096) : rnd.nextInt(64);
            final int frameLength = FrameHeader.LENGTH + payload;
            final int before = rnd.nextInt(16);
            final byte[] b = new byte[before + frameLength + rnd.nextInt(16)];
            final UnsafeBuffer buf = new UnsafeBuffer(b);
            final int flags = new int[] {FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.FLAG_BEGIN, FrameHeader.FLAG_END, 0}[rnd.nextInt(4)];
            FrameHeader.write(buf, before, flags, frameLength, rnd.nextInt(), rnd.nextInt(), rnd.nextLong(Long.MAX_VALUE), rnd.nextLong());
            for (int i = 0; i < payload; i++) {
                b[before + FrameHeader.LENGTH + i] = (byte) rnd.nextInt(256);
            }
            final int mode = rnd.nextInt(4);
            if (mode == 1) {
                Fuzz.mutate(rnd, b, 1 + rnd.nextInt(4));
            } else if (mode == 2) {
                final byte[] garbage = Fuzz.bytes(rnd, b.length);
                System.arraycopy(garbage, 0, b, 0, b.length);
            }
            // delivered length: usually the frame, sometimes truncated or with trailing bytes (still inside the buffer)
            int length = frameLength;
            if (mode == 3 || rnd.nextInt(8) == 0) {
                length = rnd.nextInt(b.length - before + 1);
            }
            final int maxFrame = rnd.nextInt(8) == 0 ? rnd.nextInt(2 * frameLength + 1) : 64 * 1024;
            final int code;
            try {
                code = FrameHeader.validate(buf, before, length, maxFrame);
            } catch (final RuntimeException ex) {
                throw new AssertionError(fuzz.fail("validate threw for length " + length + " max " + maxFrame), ex);
            }
            if (code < FrameHeader.VALID || code > FrameHeader.ERR_TOO_LONG) {
                fail(fuzz.fail("unknown validate code " + code));
            }
            assertTrue(!FrameHeader.describe(code).isEmpty(), fuzz.fail("no description for " + code));
            final boolean model = modelAccepts(b, before, length, maxFrame);
            if (model != (code == FrameHeader.VALID)) {
                fail(fuzz.fail("validate said " + FrameHeader.describe(code) + " but the documented rules say "
                    + (model ? "valid" : "invalid") + " (length " + length + ", max " + maxFrame + ")"));
            }
            codes[code]++;
            if (code == FrameHeader.VALID) {
                accepted++;
                // accessors read back what the header says, without throwing
                assertEquals(length, FrameHeader.frameLength(buf, before), fuzz.fail("frameLength"));
                assertTrue(FrameHeader.sequence(buf, before) >= 0, fuzz.fail("sequence"));
            } else {
                rejected++;
            }
        }
        System.out.println(fuzz.summary("accepted=" + accepted + " rejected=" + rejected + " byCode=" + java.util.Arrays.toString(codes)));
        assertTrue(accepted > 0 && rejected > 0, fuzz.fail("the generator must produce both valid and invalid frames"));
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void writeThenValidateRoundTrips() {
        final Fuzz fuzz = Fuzz.start("FrameHeader.write/read");
        final UnsafeBuffer buf = new UnsafeBuffer(new byte[FrameHeader.LENGTH + 64]);
        int n = 0;
        while (fuzz.more() && n++ < 200_000) {
            final SplittableRandom rnd = fuzz.nextCase();
            final int frameLength = FrameHeader.LENGTH + rnd.nextInt(33);
            final int offset = rnd.nextInt(32);
            final int topicId = Fuzz.interestingInt(rnd);
            final int sessionId = Fuzz.interestingInt(rnd);
            final long sequence = rnd.nextInt(4) == 0 ? Long.MAX_VALUE - rnd.nextInt(3) : rnd.nextLong(Long.MAX_VALUE);
            final long ts = rnd.nextLong();
            FrameHeader.write(buf, offset, FrameHeader.FLAGS_UNFRAGMENTED, frameLength, topicId, sessionId, sequence, ts);
            assertEquals(FrameHeader.VALID, FrameHeader.validate(buf, offset, frameLength, frameLength), fuzz.fail("a written frame is invalid"));
            assertEquals(topicId, FrameHeader.topicId(buf, offset), fuzz.fail("topicId"));
            assertEquals(sessionId, FrameHeader.sessionId(buf, offset), fuzz.fail("sessionId"));
            assertEquals(sequence, FrameHeader.sequence(buf, offset), fuzz.fail("sequence"));
            assertEquals(ts, FrameHeader.timestampNs(buf, offset), fuzz.fail("timestamp"));
            assertEquals(FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.flags(buf, offset), fuzz.fail("flags"));
        }
        System.out.println(fuzz.summary("round trips=" + (n - 1)));
    }
}
