package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * A topic's queue of refused frames on a host: frames come out in order across wrap-around, copied (the receive buffer
 * they came from is reused at once), a full ring refuses (the peer sent past its window), and every frame consumed or
 * dropped is owed back to the publisher exactly once.
 */
class TopicQueueTest {
    private final UnsafeBuffer recv = new UnsafeBuffer(new byte[4096]);

    private void frame(final int value, final int length) {
        recv.setMemory(100, length, (byte) value);
        recv.putInt(100, value);
    }

    @Test
    void framesComeOutInOrderAsCopiesAndAFullRingRefuses() {
        TopicQueue q = new TopicQueue(7, 3);
        int next = 0;
        int expected = 0;
        for (int round = 0; round < 5; round++) {
            while (q.size() < 3) {
                frame(next, 40 + next * 100); // growing frames: a reused slot grows to the largest
                assertTrue(q.add(recv, 100, 40 + next * 100, next % 2 == 0));
                next++;
            }
            frame(999, 16);
            assertFalse(q.add(recv, 100, 16, true), "full: the peer sent past the window");
            for (int i = 0; i < 2; i++) {
                assertEquals(expected, q.headBuffer().getInt(0), "in order, and not the receive buffer's later contents");
                assertEquals(40 + expected * 100, q.headLength());
                assertEquals(expected % 2 == 0, q.headValid());
                assertEquals((byte) expected, q.headBuffer().getByte(q.headLength() - 1), "the whole frame was copied");
                q.consumeHead();
                expected++;
            }
        }
        assertEquals(10, q.owed, "each consumed frame owed back once");
        assertEquals(1, q.size());
        q.headSinkIndex = 2;
        q.headTaken = true;
        assertEquals(1, q.clear(), "the last local subscription closed: the queued frame is dropped");
        assertEquals(11, q.owed, "and owed back too");
        assertEquals(0, q.size());
        assertEquals(0, q.headSinkIndex);
        assertFalse(q.headTaken);
    }
}
