package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.ibv_recv_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * A reusable, preallocated post list of receive work requests (one scatter/gather entry each), for one
 * {@code ibv_post_recv} over a linked list ({@link QueuePair#postRecv(RecvRequestList)}). {@link #add} appends a request
 * and links it behind the previous one; nothing is allocated per request (the work requests, their entries and the
 * segment of each are made once, here). Not thread-safe: one owner thread.
 *
 * <p>{@link #add} writes a request's fields with plain stores through an {@link UnsafeBuffer} over the native arrays
 * at the generated layouts' offsets (as {@link SendRequestList} does), not a memory-segment access per field (bounds,
 * scope and alignment checks each, which the emulated lab's JIT was slow to fold away: a receive poller re-posts
 * every buffer it delivers). Writing after {@link #close} throws.
 */
public final class RecvRequestList implements AutoCloseable {
    private static final long WR_BYTES = ibv_recv_wr.sizeof();
    private static final int WR_STRIDE = (int) WR_BYTES;
    private static final int SGE_STRIDE = (int) ibv_sge.sizeof();
    private static final int WR_ID = (int) ibv_recv_wr.wr_id$offset();
    private static final int NEXT = (int) ibv_recv_wr.next$offset();
    private static final int SGE_ADDR = (int) ibv_sge.addr$offset();
    private static final int SGE_LENGTH = (int) ibv_sge.length$offset();
    private static final int SGE_LKEY = (int) ibv_sge.lkey$offset();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment wrs;
    private final MemorySegment[] wr;
    private final MemorySegment[] sge;
    private final MemorySegment badWr = arena.allocate(ValueLayout.ADDRESS);
    private final UnsafeBuffer badWrView = new UnsafeBuffer(badWr.address(), (int) ValueLayout.ADDRESS.byteSize());
    private final UnsafeBuffer wrView;
    private final UnsafeBuffer sgeView;
    private boolean closed;
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
        this.wrView = new UnsafeBuffer(wrs.address(), capacity * WR_STRIDE);
        this.sgeView = new UnsafeBuffer(sges.address(), capacity * SGE_STRIDE);
    }

    /**
     * Appends a receive into {@code lengthBytes} at {@code offset} of {@code mr} (needs LOCAL_WRITE).
     *
     * @throws IllegalStateException if the list is full (check {@link #isFull()} first)
     */
    public void add(long wrId, MemoryRegion mr, long offset, int lengthBytes) {
        add(wrId, mr.address(), mr.sizeBytes(), mr.lkey(), offset, lengthBytes);
    }

    /** {@link #add(long, MemoryRegion, long, int)} into a region at {@code regionAddress} of {@code regionBytes}. */
    void add(long wrId, long regionAddress, long regionBytes, int regionLkey, long offset, int lengthBytes) {
        if (offset < 0 || lengthBytes < 0 || offset + lengthBytes > regionBytes) {
            throw new IndexOutOfBoundsException("range [" + offset + ", +" + lengthBytes + ") outside memory region of "
                    + regionBytes + " bytes");
        }
        if (closed) {
            throw new IllegalStateException("receive post list closed");
        }
        final int i = count;
        if (i == wr.length) {
            throw new IllegalStateException("receive post list full (" + wr.length + ")");
        }
        final int w = i * WR_STRIDE;
        final int s = i * SGE_STRIDE;
        wrView.putLong(w + WR_ID, wrId);
        wrView.putLong(w + NEXT, 0L);
        sgeView.putLong(s + SGE_ADDR, regionAddress + offset);
        sgeView.putInt(s + SGE_LENGTH, lengthBytes);
        sgeView.putInt(s + SGE_LKEY, regionLkey);
        if (i > 0) {
            wrView.putLong(w - WR_STRIDE + NEXT, wrs.address() + w);
        }
        count = i + 1;
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
        checkOpen();
        long at = badWrView.getLong(0) - wrs.address();
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

    /** @return the first request's address, for a post ({@link InlineVerbs}); throws once closed */
    long firstAddress() {
        checkOpen();
        return wrs.address();
    }

    /** Clears {@code bad_wr} before a post. */
    void resetBadWr() {
        checkOpen();
        badWrView.putLong(0, 0L);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("receive post list closed");
        }
    }

    /** @return where a failed post writes {@code bad_wr} */
    long badWrAddress() {
        return badWrView.addressOffset();
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            closed = true;
            arena.close();
        }
    }
}
