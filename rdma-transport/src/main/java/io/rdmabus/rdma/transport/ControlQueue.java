package io.rdmabus.rdma.transport;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A connection's control messages waiting for a free control slot (SUB, UNSUB, UD_INFO, RESUME, RESUME_FAILED, START, NAK), in the
 * order they were queued, each already encoded as it goes on the wire (through a {@link ControlFlyweight}) in a
 * fixed-size entry of a ring; {@link ControlSender} copies the head entry into a control slot and posts it. No
 * allocation per message: the ring doubles (copying its entries in order) only when more are queued than ever before.
 *
 * <p>Owner: the poller thread (a {@link Connection} field marked "poller").
 */
final class ControlQueue {
    /** One entry: the longest queued message (RESUME_FAILED). */
    static final int ENTRY_BYTES = Wire.RESUME_FAILED_BYTES;
    private static final int INITIAL_ENTRIES = 8;

    private final ControlFlyweight writer = new ControlFlyweight();
    private final ControlFlyweight reader = new ControlFlyweight();
    private UnsafeBuffer ring = new UnsafeBuffer(new byte[INITIAL_ENTRIES * ENTRY_BYTES]);
    private int capacity = INITIAL_ENTRIES;
    private int head;
    private int size;

    /** Queues SUB of {@code topicId}. */
    void sub(final int topicId) {
        claim().encodeSub(topicId);
    }

    /** Queues UNSUB of {@code topicId}. */
    void unsub(final int topicId) {
        claim().encodeUnsub(topicId);
    }

    /** Queues UD_INFO with this node's UD address. */
    void udInfo(final int qpn, final int ipv4, final int qkey) {
        claim().encodeUdInfo(qpn, ipv4, qkey);
    }

    /** Queues RESUME of {@code sessionId} of {@code topicId} from {@code nextSequence} on. */
    void resume(final int topicId, final int sessionId, final long nextSequence) {
        claim().encodeResume(topicId, sessionId, nextSequence);
    }

    /** Queues RESUME_FAILED (see {@link ControlFlyweight#encodeResumeFailed}). */
    void resumeFailed(final int topicId, final int sessionId, final int retentionFrames, final long nextSequence, final long oldestSequence) {
        claim().encodeResumeFailed(topicId, sessionId, retentionFrames, nextSequence, oldestSequence);
    }

    /** Queues START: this connection's stream of {@code sessionId} of {@code topicId} starts at {@code firstSequence}. */
    void start(final int topicId, final int sessionId, final long firstSequence) {
        claim().encodeStart(topicId, sessionId, firstSequence);
    }

    /** Queues NAK of {@code count} frames of session {@code sessionId} of {@code topicId} from {@code first} on. */
    void nak(final int topicId, final int sessionId, final long first, final int count) {
        claim().encodeNak(topicId, sessionId, first, count);
    }

    /** @return whether nothing is queued */
    boolean isEmpty() {
        return size == 0;
    }

    /** @return messages queued */
    int size() {
        return size;
    }

    /** @return the ring holding the entries ({@link #headOffset} says where the head one starts) */
    DirectBuffer buffer() {
        return ring;
    }

    /** @return the offset of the head entry in {@link #buffer} (only when not {@link #isEmpty}) */
    int headOffset() {
        return head * ENTRY_BYTES;
    }

    /** @return the head message, wrapped for reading (only when not {@link #isEmpty}) */
    ControlFlyweight peek() {
        return reader.wrap((DirectBuffer) ring, headOffset());
    }

    /** @return the wire length of the head message */
    int headLength() {
        return ControlFlyweight.lengthOf(peek().type());
    }

    /** Drops the head message (it was posted). */
    void poll() {
        if (size > 0) {
            head = head + 1 == capacity ? 0 : head + 1;
            size--;
        }
    }

    private ControlFlyweight claim() {
        if (size == capacity) {
            grow();
        }
        int tail = head + size;
        if (tail >= capacity) {
            tail -= capacity;
        }
        size++;
        return writer.wrap(ring, tail * ENTRY_BYTES);
    }

    private void grow() {
        UnsafeBuffer bigger = new UnsafeBuffer(new byte[capacity * 2 * ENTRY_BYTES]);
        for (int i = 0; i < size; i++) {
            int from = head + i < capacity ? head + i : head + i - capacity;
            bigger.putBytes(i * ENTRY_BYTES, ring, from * ENTRY_BYTES, ENTRY_BYTES);
        }
        ring = bigger;
        capacity *= 2;
        head = 0;
    }
}
