package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.ibv_recv_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A reusable, preallocated post list of receive work requests (one scatter/gather entry each), for one
 * {@code ibv_post_recv} over a linked list ({@link QueuePair#postRecv(RecvRequestList)}). {@link #add} appends a request
 * and links it behind the previous one; nothing is allocated per request (the work requests, their entries and the
 * segment of each are made once, here). Not thread-safe: one owner thread.
 */
public final class RecvRequestList implements AutoCloseable {
    private static final long WR_BYTES = ibv_recv_wr.sizeof();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment wrs;
    private final MemorySegment[] wr;
    private final MemorySegment[] sge;
    private final MemorySegment badWr = arena.allocate(ValueLayout.ADDRESS);
    private int count;

    /** @param capacity work requests per post at most */
    public RecvRequestList(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be > 0, got " + capacity);
        }
        this.wrs = ibv_recv_wr.allocateArray(capacity, arena);
        MemorySegment sges = ibv_sge.allocateArray(capacity, arena);
        this.wr = new MemorySegment[capacity];
        this.sge = new MemorySegment[capacity];
        for (int i = 0; i < capacity; i++) {
            wr[i] = ibv_recv_wr.asSlice(wrs, i);
            sge[i] = ibv_sge.asSlice(sges, i);
            ibv_recv_wr.sg_list(wr[i], sge[i]);
            ibv_recv_wr.num_sge(wr[i], 1);
        }
    }

    /**
     * Appends a receive into {@code lengthBytes} at {@code offset} of {@code mr} (needs LOCAL_WRITE).
     *
     * @throws IllegalStateException if the list is full (check {@link #isFull()} first)
     */
    public void add(long wrId, MemoryRegion mr, long offset, int lengthBytes) {
        if (offset < 0 || lengthBytes < 0 || offset + lengthBytes > mr.sizeBytes()) {
            throw new IndexOutOfBoundsException("range [" + offset + ", +" + lengthBytes + ") outside memory region of "
                    + mr.sizeBytes() + " bytes");
        }
        if (count == wr.length) {
            throw new IllegalStateException("receive post list full (" + wr.length + ")");
        }
        MemorySegment w = wr[count];
        ibv_recv_wr.wr_id(w, wrId);
        ibv_recv_wr.next(w, MemorySegment.NULL);
        ibv_sge.addr(sge[count], mr.address() + offset);
        ibv_sge.length(sge[count], lengthBytes);
        ibv_sge.lkey(sge[count], mr.lkey());
        if (count > 0) {
            ibv_recv_wr.next(wr[count - 1], w);
        }
        count++;
    }

    /** @return requests added since the last {@link #clear} */
    public int count() {
        return count;
    }

    /** @return requests per post at most */
    public int capacity() {
        return wr.length;
    }

    /** @return whether {@link #add} has no room left */
    public boolean isFull() {
        return count == wr.length;
    }

    /** @return the wr_id of request {@code i} */
    public long wrId(int i) {
        return ibv_recv_wr.wr_id(wr[i]);
    }

    /** Empties the list (after a post). */
    public void clear() {
        count = 0;
    }

    /**
     * Keeps requests {@code from} .. {@code count - 1}, moved to the front (after a post that failed at {@code from}:
     * the ones before it were posted, these were not).
     */
    public void dropFirst(int from) {
        if (from < 0 || from > count) {
            throw new IndexOutOfBoundsException("dropFirst(" + from + ") of " + count);
        }
        int keep = count - from;
        for (int i = 0; i < keep; i++) {
            MemorySegment.copy(sge[from + i], 0, sge[i], 0, ibv_sge.sizeof());
            ibv_recv_wr.wr_id(wr[i], ibv_recv_wr.wr_id(wr[from + i]));
            ibv_recv_wr.next(wr[i], i + 1 < keep ? wr[i + 1] : MemorySegment.NULL);
        }
        count = keep;
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
