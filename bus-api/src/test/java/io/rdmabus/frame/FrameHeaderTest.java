package io.rdmabus.frame;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

class FrameHeaderTest {
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);

    private void writeValid(final int offset, final int frameLength) {
        FrameHeader.write(buffer, offset, FrameHeader.FLAGS_UNFRAGMENTED, frameLength, 42, 7, 9L, 123L);
    }

    @Test
    void roundTripsEveryField() {
        FrameHeader.write(buffer, 8, FrameHeader.FLAG_BEGIN, 100, -5, 77, Long.MAX_VALUE, 1_700_000_000_000_000_000L);
        assertEquals(FrameHeader.VALID, FrameHeader.validate(buffer, 8, 100, 256));
        assertEquals(FrameHeader.FLAG_BEGIN, FrameHeader.flags(buffer, 8));
        assertEquals(100, FrameHeader.frameLength(buffer, 8));
        assertEquals(-5, FrameHeader.topicId(buffer, 8));
        assertEquals(77, FrameHeader.sessionId(buffer, 8));
        assertEquals(Long.MAX_VALUE, FrameHeader.sequence(buffer, 8));
        assertEquals(1_700_000_000_000_000_000L, FrameHeader.timestampNs(buffer, 8));
    }

    @Test
    void layoutIsLittleEndianAtDocumentedOffsets() {
        writeValid(0, 40);
        assertEquals(1, buffer.getByte(0));
        assertEquals(FrameHeader.TYPE_DATA, buffer.getByte(1));
        assertEquals((byte) 0xC0, buffer.getByte(2));
        assertEquals(40, buffer.getByte(4));
        assertEquals(42, buffer.getByte(8));
        assertEquals(7, buffer.getByte(12));
        assertEquals(9, buffer.getByte(16));
        assertEquals(123, buffer.getByte(24));
    }

    @Test
    void rejectsEachBadField() {
        writeValid(0, 40);
        assertEquals(FrameHeader.ERR_TRUNCATED_HEADER, FrameHeader.validate(buffer, 0, 31, 256));
        assertEquals(FrameHeader.ERR_TOO_LONG, FrameHeader.validate(buffer, 0, 40, 39));
        assertEquals(FrameHeader.ERR_LENGTH, FrameHeader.validate(buffer, 0, 41, 256));

        buffer.putByte(0, (byte) 2);
        assertEquals(FrameHeader.ERR_VERSION, FrameHeader.validate(buffer, 0, 40, 256));
        writeValid(0, 40);
        buffer.putByte(1, (byte) 9);
        assertEquals(FrameHeader.ERR_TYPE, FrameHeader.validate(buffer, 0, 40, 256));
        writeValid(0, 40);
        buffer.putShort(2, (short) 0x01);
        assertEquals(FrameHeader.ERR_FLAGS, FrameHeader.validate(buffer, 0, 40, 256));
        writeValid(0, 40);
        buffer.putLong(16, -1L);
        assertEquals(FrameHeader.ERR_SEQUENCE, FrameHeader.validate(buffer, 0, 40, 256));
    }

    @Test
    void randomBytesNeverThrow() {
        final Random random = new Random(20261121L);
        final byte[] bytes = new byte[256];
        final UnsafeBuffer view = new UnsafeBuffer(bytes);
        int valid = 0;
        for (int i = 0; i < 100_000; i++) {
            random.nextBytes(bytes);
            final int length = random.nextInt(257);
            if (FrameHeader.validate(view, 0, length, 256) == FrameHeader.VALID) {
                valid++;
            }
        }
        assertEquals(0, valid, "random bytes should essentially never form a valid header");
    }

    @Test
    void topicIdIsStableAndNeverZero() {
        assertEquals(FrameHeader.topicId("md.quotes"), FrameHeader.topicId("md.quotes"));
        assertNotEquals(FrameHeader.topicId("md.quotes"), FrameHeader.topicId("md.trades"));
        assertNotEquals(0, FrameHeader.topicId(""));
    }
}
