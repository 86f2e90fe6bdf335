package io.rdmabus.rdma.transport;

import io.rdmabus.frame.FrameHeader;

import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLongArray;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The last {@code rdma.ud.recovery.frames} frames of one BEST_EFFORT UD publication, copied at commit, for the NAKs of
 * subscribers that lost some of them ({@link UdRecoveryServer} re-sends them over RC). Frame of sequence {@code s} lives
 * in slot {@code s mod capacity}; a copy, not the send slot itself, so retention does not hold the publication's
 * registered slots (which go back to the pool when their datagrams complete).
 *
 * <p>Threads: the publisher thread holding the claim writes ({@link #record}, from {@code UdPublication.commit}); the
 * poller reads ({@link #copy}) while it serves a NAK. A per-slot sequence lock makes the read safe without a lock on the
 * publisher's path: the writer marks the slot -1, copies, then publishes the sequence (release); the reader checks the
 * sequence before and after its copy and discards a copy the writer overlapped. Preallocated: no allocation per frame.
 */
final class UdRetention {
    private static final long WRITING = -1;

    private final int capacity;
    private final int stride;
    private final UnsafeBuffer frames;
    private final int[] lengths;
    /** Per slot: the sequence of the frame it holds, or {@link #WRITING} (empty, or being written). */
    private final AtomicLongArray sequences;

    /**
     * @param capacity      frames retained
     * @param maxFrameBytes the largest frame (one datagram minus the envelope)
     */
    UdRetention(final int capacity, final int maxFrameBytes) {
        this.capacity = capacity;
        this.stride = maxFrameBytes;
        this.frames = new UnsafeBuffer(new byte[capacity * maxFrameBytes]);
        this.lengths = new int[capacity];
        this.sequences = new AtomicLongArray(capacity);
        for (int i = 0; i < capacity; i++) {
            sequences.set(i, WRITING);
        }
    }

    /**
     * Keeps a copy of the committed frame at {@code [offset, offset + length)} of {@code src} (publisher thread). A
     * frame too short for a bus header, or with a negative sequence, is not retained (the bus never writes one).
     */
    void record(final DirectBuffer src, final int offset, final int length) {
        if (length < FrameHeader.LENGTH || length > stride) {
            return;
        }
        final long sequence = FrameHeader.sequence(src, offset);
        if (sequence < 0) {
            return;
        }
        final int slot = (int) (sequence % capacity);
        sequences.set(slot, WRITING);
        VarHandle.storeStoreFence(); // the copy below is not seen before the slot is marked
        frames.putBytes(slot * stride, src, offset, length);
        lengths[slot] = length;
        sequences.setRelease(slot, sequence);
    }

    /**
     * Copies the retained frame of {@code sequence} of session {@code session} into {@code dst} (poller thread).
     *
     * @return its length, or -1 if it is no longer (or never was) retained
     */
    int copy(final long sequence, final int session, final MutableDirectBuffer dst, final int dstOffset) {
        if (sequence < 0) {
            return -1;
        }
        final int slot = (int) (sequence % capacity);
        if (sequences.getAcquire(slot) != sequence) {
            return -1;
        }
        final int length = lengths[slot];
        if (length < FrameHeader.LENGTH || length > stride) {
            return -1;
        }
        dst.putBytes(dstOffset, frames, slot * stride, length);
        VarHandle.loadLoadFence(); // the copy's reads happen before the check below
        if (sequences.get(slot) != sequence) {
            return -1; // overwritten while we copied
        }
        return FrameHeader.sessionId(dst, dstOffset) == session && FrameHeader.sequence(dst, dstOffset) == sequence ? length : -1;
    }

    /** @return frames retained at most */
    int capacity() {
        return capacity;
    }
}
