package io.rdmabus.rdma.transport;

import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;

/**
 * Subscriber side, one per (connection, topic): the frames of the topic that a back-pressuring sink refused, copied out
 * of the connection's receive buffers so those go back to the peer at once and the other topics on the connection keep
 * flowing, and the frames of the topic's window owed back to the publisher in a TOPIC_CREDIT.
 *
 * <p>A ring of {@code capacity} frames: the window this node granted in its INIT, which bounds what the publisher may
 * have outstanding of one topic, so a full ring means the peer sent past its window (a protocol error, see
 * {@link Poller}). Slots are heap buffers allocated on their first use and grown once to the largest frame: no
 * allocation per frame in the steady state, and nothing for a topic that never back-pressures.
 *
 * <p>Owner: the poller thread (through {@link Connection#topicQueue}).
 */
final class TopicQueue {
    final int topicId;
    private final ExpandableArrayBuffer[] frames;
    private final int[] lengths;
    private final boolean[] valid;
    private int head;
    private int size;
    /** The sink to offer the head frame to next (those before it took it). */
    int headSinkIndex;
    /** Whether a sink before {@link #headSinkIndex} took the head frame into its stream. */
    boolean headTaken;
    /** Frames of this topic consumed or dropped here whose window was not returned to the publisher yet. */
    int owed;

    TopicQueue(final int topicId, final int capacity) {
        this.topicId = topicId;
        this.frames = new ExpandableArrayBuffer[capacity];
        this.lengths = new int[capacity];
        this.valid = new boolean[capacity];
    }

    /** @return frames queued */
    int size() {
        return size;
    }

    /**
     * Copies a frame to the tail.
     *
     * @return false if the ring is full (the peer sent past its window); nothing was copied
     */
    boolean add(final DirectBuffer src, final int offset, final int length, final boolean validFrame) {
        if (size == frames.length) {
            return false;
        }
        int tail = (head + size) % frames.length;
        ExpandableArrayBuffer slot = frames[tail];
        if (slot == null) {
            slot = new ExpandableArrayBuffer(Math.max(length, 64));
            frames[tail] = slot;
        }
        slot.putBytes(0, src, offset, length); // grows the slot once if this frame is its largest yet
        lengths[tail] = length;
        valid[tail] = validFrame;
        size++;
        return true;
    }

    /** @return the head frame's buffer (the frame at offset 0); only while {@link #size()} &gt; 0 */
    DirectBuffer headBuffer() {
        return frames[head];
    }

    int headLength() {
        return lengths[head];
    }

    boolean headValid() {
        return valid[head];
    }

    /** Drops the head frame (every sink had it); its window is owed back. */
    void consumeHead() {
        head = (head + 1) % frames.length;
        size--;
        headSinkIndex = 0;
        headTaken = false;
        owed++;
    }

    /**
     * Drops every queued frame (the topic's last local subscription closed): their window is owed back.
     *
     * @return frames dropped
     */
    int clear() {
        int dropped = size;
        owed += dropped;
        head = 0;
        size = 0;
        headSinkIndex = 0;
        headTaken = false;
        return dropped;
    }
}
