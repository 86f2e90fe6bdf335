package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_send_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A reusable, preallocated post list of SEND work requests (one scatter/gather entry each), for one
 * {@code ibv_post_send} over a linked list ({@link QueuePair#postSend(SendRequestList)}): e.g. one datagram per UD
 * destination. {@link #addSend} appends a request and links it behind the previous one; nothing is allocated per
 * request. Not thread-safe: one owner thread at a time.
 */
public final class SendRequestList implements AutoCloseable {
    private static final int SIGNALED = RdmaCm.IBV_SEND_SIGNALED();
    private static final int INLINE = RdmaCm.IBV_SEND_INLINE();
    private static final long WR_BYTES = ibv_send_wr.sizeof();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment wrs;
    private final MemorySegment[] wr;
    private final MemorySegment[] sge;
    private final MemorySegment[] ud;
    private final int[] length;
    private final MemorySegment badWr = arena.allocate(ValueLayout.ADDRESS);
    private int count;

    /** @param capacity work requests per post at most */
    public SendRequestList(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be > 0, got " + capacity);
        }
        this.wrs = ibv_send_wr.allocateArray(capacity, arena);
        MemorySegment sges = ibv_sge.allocateArray(capacity, arena);
        this.wr = new MemorySegment[capacity];
        this.sge = new MemorySegment[capacity];
        this.ud = new MemorySegment[capacity];
        this.length = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            wr[i] = ibv_send_wr.asSlice(wrs, i);
            sge[i] = ibv_sge.asSlice(sges, i);
            ud[i] = ibv_send_wr.wr.ud(ibv_send_wr.wr(wr[i]));
            ibv_send_wr.sg_list(wr[i], sge[i]);
            ibv_send_wr.num_sge(wr[i], 1);
        }
    }

    /**
     * Appends a SEND of {@code lengthBytes} at {@code offset} of {@code mr}. A signalled request produces a completion;
     * an inline one is copied into the work request at post time (the QP's granted {@link QueuePair#maxInlineBytes()}
     * must cover it), so its buffer may be reused as soon as the post returns.
     *
     * @throws IllegalStateException if the list is full
     */
    public void addSend(long wrId, MemoryRegion mr, long offset, int lengthBytes, boolean signaled, boolean inline) {
        if (offset < 0 || lengthBytes < 0 || offset + lengthBytes > mr.sizeBytes()) {
            throw new IndexOutOfBoundsException("range [" + offset + ", +" + lengthBytes + ") outside memory region of "
                    + mr.sizeBytes() + " bytes");
        }
        if (count == wr.length) {
            throw new IllegalStateException("send post list full (" + wr.length + ")");
        }
        MemorySegment w = wr[count];
        ibv_send_wr.wr_id(w, wrId);
        ibv_send_wr.next(w, MemorySegment.NULL);
        ibv_send_wr.opcode(w, RdmaCm.IBV_WR_SEND());
        ibv_send_wr.send_flags(w, (signaled ? SIGNALED : 0) | (inline ? INLINE : 0));
        ibv_sge.addr(sge[count], mr.address() + offset);
        ibv_sge.length(sge[count], lengthBytes);
        ibv_sge.lkey(sge[count], mr.lkey());
        length[count] = lengthBytes;
        if (count > 0) {
            ibv_send_wr.next(wr[count - 1], w);
        }
        count++;
    }

    /** Sets the UD destination of the request added last. */
    public void toUd(AddressHandle ah, int remoteQpn, int remoteQkey) {
        MemorySegment u = ud[count - 1];
        ibv_send_wr.wr.ud.ah(u, ah.segment());
        ibv_send_wr.wr.ud.remote_qpn(u, remoteQpn);
        ibv_send_wr.wr.ud.remote_qkey(u, remoteQkey);
    }

    /** Sets or clears the signalled flag of request {@code i} (a signalled request produces a completion). */
    public void signal(int i, boolean signaled) {
        MemorySegment w = wr[i];
        int flags = ibv_send_wr.send_flags(w) & ~SIGNALED;
        ibv_send_wr.send_flags(w, signaled ? flags | SIGNALED : flags);
    }

    /** Sets the wr_id of request {@code i}. */
    public void wrId(int i, long wrId) {
        ibv_send_wr.wr_id(wr[i], wrId);
    }

    /** Drops the request added last (e.g. its destination went away while the list was built). */
    public void removeLast() {
        count--;
        if (count > 0) {
            ibv_send_wr.next(wr[count - 1], MemorySegment.NULL);
        }
    }

    /** @return whether request {@code i} is signalled */
    public boolean signaled(int i) {
        return (ibv_send_wr.send_flags(wr[i]) & SIGNALED) != 0;
    }

    /** @return requests added since the last {@link #clear} */
    public int count() {
        return count;
    }

    /** @return requests per post at most */
    public int capacity() {
        return wr.length;
    }

    /** Empties the list (after a post). */
    public void clear() {
        count = 0;
    }

    /**
     * @return after a failed post, the index of the request the provider refused ({@code bad_wr}): those before it
     *     were posted, it and those after it were not; -1 if {@code bad_wr} points at none of them
     */
    public int failedIndex() {
        long at = badWr.get(ValueLayout.JAVA_LONG, 0) - wrs.address();
        if (at < 0 || at % WR_BYTES != 0 || at / WR_BYTES >= count) {
            return -1;
        }
        return (int) (at / WR_BYTES);
    }

    int length(int i) {
        return length[i];
    }

    MemorySegment first() {
        return wr[0];
    }

    MemorySegment badWr() {
        return badWr;
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
