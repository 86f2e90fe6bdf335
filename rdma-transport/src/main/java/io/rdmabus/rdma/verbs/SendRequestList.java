package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_send_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.agrona.concurrent.UnsafeBuffer;

import static io.rdmabus.rdma.verbs.SendWrLayout.FLAGS;
import static io.rdmabus.rdma.verbs.SendWrLayout.INLINE;
import static io.rdmabus.rdma.verbs.SendWrLayout.NEXT;
import static io.rdmabus.rdma.verbs.SendWrLayout.SGE_ADDR;
import static io.rdmabus.rdma.verbs.SendWrLayout.SGE_BYTES;
import static io.rdmabus.rdma.verbs.SendWrLayout.SGE_LENGTH;
import static io.rdmabus.rdma.verbs.SendWrLayout.SGE_LKEY;
import static io.rdmabus.rdma.verbs.SendWrLayout.SIGNALED;
import static io.rdmabus.rdma.verbs.SendWrLayout.UD_AH;
import static io.rdmabus.rdma.verbs.SendWrLayout.UD_QKEY;
import static io.rdmabus.rdma.verbs.SendWrLayout.UD_QPN;
import static io.rdmabus.rdma.verbs.SendWrLayout.WR_BYTES;
import static io.rdmabus.rdma.verbs.SendWrLayout.WR_ID;

/**
 * A reusable, preallocated post list of SEND work requests (one scatter/gather entry each), for one
 * {@code ibv_post_send} over a linked list ({@link QueuePair#postSend(SendRequestList)}): e.g. one datagram per UD
 * destination. {@link #addSend} appends a request and links it behind the previous one; nothing is allocated per
 * request. Not thread-safe: one owner thread at a time.
 *
 * <p>The work requests are built once and only the fields that change are written per request: the constant ones
 * (opcode, scatter/gather pointer and count, the links between neighbours) at construction, the per-request ones
 * (wr_id, address, length) always, and the rest (flags, lkey, UD destination) only when they differ from what the
 * slot already holds, which Java-side copies say without reading native memory. The writes go through an
 * {@link UnsafeBuffer} over the native array at field offsets taken from the generated layouts: plain stores, not
 * a memory-segment access (bounds, scope and alignment checks) per field, which the JIT under emulation is slow to
 * make cheap. The arena's memory is freed only by {@link #close}, after which every write method throws.
 */
public final class SendRequestList implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment wrs;
    private final MemorySegment first;
    private final UnsafeBuffer wrView;
    private final UnsafeBuffer sgeView;
    private final int capacity;
    /** Java-side copies of what each native request holds (no native read to compare or report). */
    private final int[] flags;
    private final int[] lkey;
    private final long[] ah;
    private final int[] qpn;
    private final int[] qkey;
    private final long[] wrId;
    private final int[] length;
    private final MemorySegment badWr = arena.allocate(ValueLayout.ADDRESS);
    private final UnsafeBuffer badWrView = new UnsafeBuffer(badWr.address(), (int) ValueLayout.ADDRESS.byteSize());
    private int count;
    /** The end of the current chain: its {@code next} is NULL, every request before it points at its successor. */
    private int terminated;
    private boolean closed;

    /** @param capacity work requests per post at most */
    public SendRequestList(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be > 0, got " + capacity);
        }
        this.capacity = capacity;
        this.wrs = ibv_send_wr.allocateArray(capacity, arena);
        MemorySegment sges = ibv_sge.allocateArray(capacity, arena);
        this.first = ibv_send_wr.asSlice(wrs, 0);
        this.wrView = new UnsafeBuffer(wrs.address(), capacity * WR_BYTES);
        this.sgeView = new UnsafeBuffer(sges.address(), capacity * SGE_BYTES);
        this.flags = new int[capacity];
        this.lkey = new int[capacity];
        this.ah = new long[capacity];
        this.qpn = new int[capacity];
        this.qkey = new int[capacity];
        this.wrId = new long[capacity];
        this.length = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            MemorySegment w = ibv_send_wr.asSlice(wrs, i);
            ibv_send_wr.sg_list(w, ibv_sge.asSlice(sges, i));
            ibv_send_wr.num_sge(w, 1);
            ibv_send_wr.opcode(w, RdmaCm.IBV_WR_SEND());
            ibv_send_wr.send_flags(w, 0);
            ibv_send_wr.next(w, i + 1 < capacity ? ibv_send_wr.asSlice(wrs, i + 1) : MemorySegment.NULL);
        }
        terminated = capacity - 1;
    }

    /**
     * Appends a SEND of {@code lengthBytes} at {@code offset} of {@code mr}. A signalled request produces a completion;
     * an inline one is copied into the work request at post time (the QP's granted {@link QueuePair#maxInlineBytes()}
     * must cover it), so its buffer may be reused as soon as the post returns.
     *
     * @throws IllegalStateException if the list is full or closed
     */
    public void addSend(long wrId, MemoryRegion mr, long offset, int lengthBytes, boolean signaled, boolean inline) {
        add(wrId, mr.address(), mr.sizeBytes(), mr.lkey(), offset, lengthBytes, signaled, inline);
    }

    /** {@link #addSend} of a region at {@code regionAddress} of {@code regionBytes} with {@code regionLkey}. */
    void add(long id, long regionAddress, long regionBytes, int regionLkey, long offset, int lengthBytes, boolean signaled,
             boolean inline) {
        if (offset < 0 || lengthBytes < 0 || offset + lengthBytes > regionBytes) {
            throw new IndexOutOfBoundsException("range [" + offset + ", +" + lengthBytes + ") outside memory region of "
                    + regionBytes + " bytes");
        }
        checkOpen();
        final int i = count;
        if (i == capacity) {
            throw new IllegalStateException("send post list full (" + capacity + ")");
        }
        final int w = i * WR_BYTES;
        final int s = i * SGE_BYTES;
        wrView.putLong(w + WR_ID, id);
        this.wrId[i] = id;
        setFlags(i, (signaled ? SIGNALED : 0) | (inline ? INLINE : 0));
        sgeView.putLong(s + SGE_ADDR, regionAddress + offset);
        sgeView.putInt(s + SGE_LENGTH, lengthBytes);
        if (lkey[i] != regionLkey) {
            sgeView.putInt(s + SGE_LKEY, regionLkey);
            lkey[i] = regionLkey;
        }
        length[i] = lengthBytes;
        if (terminated != i) {
            if (terminated < i) {
                link(terminated); // the previous end (always i - 1 here) is no longer the end
            }
            wrView.putLong(w + NEXT, 0L); // an end left further on by a longer list before stays: it is past the end
            terminated = i;
        }
        count = i + 1;
    }

    /** Sets the UD destination of the request added last. */
    public void toUd(AddressHandle handle, int remoteQpn, int remoteQkey) {
        toUd(handle.segment().address(), remoteQpn, remoteQkey);
    }

    /** {@link #toUd(AddressHandle, int, int)} by the address handle's native address. */
    void toUd(long handleAddress, int remoteQpn, int remoteQkey) {
        checkOpen();
        final int i = count - 1;
        final int w = i * WR_BYTES;
        if (ah[i] != handleAddress) {
            wrView.putLong(w + UD_AH, handleAddress);
            ah[i] = handleAddress;
        }
        if (qpn[i] != remoteQpn) {
            wrView.putInt(w + UD_QPN, remoteQpn);
            qpn[i] = remoteQpn;
        }
        if (qkey[i] != remoteQkey) {
            wrView.putInt(w + UD_QKEY, remoteQkey);
            qkey[i] = remoteQkey;
        }
    }

    /** Sets or clears the signalled flag of request {@code i} (a signalled request produces a completion). */
    public void signal(int i, boolean signaled) {
        checkIndex(i);
        setFlags(i, signaled ? flags[i] | SIGNALED : flags[i] & ~SIGNALED);
    }

    /** Sets the wr_id of request {@code i}. */
    public void wrId(int i, long id) {
        checkIndex(i);
        wrView.putLong(i * WR_BYTES + WR_ID, id);
        wrId[i] = id;
    }

    /** @return the wr_id of request {@code i} */
    public long wrId(int i) {
        checkIndex(i);
        return wrId[i];
    }

    /** Drops the request added last (e.g. its destination went away while the list was built). */
    public void removeLast() {
        checkOpen();
        count--;
        if (count > 0) {
            wrView.putLong((count - 1) * WR_BYTES + NEXT, 0L); // the removed one's NULL stays: it is past the end
            terminated = count - 1;
        }
    }

    /** @return whether request {@code i} is signalled */
    public boolean signaled(int i) {
        checkIndex(i);
        return (flags[i] & SIGNALED) != 0;
    }

    /** @return requests added since the last {@link #clear} */
    public int count() {
        return count;
    }

    /** @return requests per post at most */
    public int capacity() {
        return capacity;
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
        checkOpen();
        long at = badWrView.getLong(0) - wrs.address();
        if (at < 0 || at % WR_BYTES != 0 || at / WR_BYTES >= count) {
            return -1;
        }
        return (int) (at / WR_BYTES);
    }

    private void setFlags(int i, int value) {
        if (flags[i] != value) {
            wrView.putInt(i * WR_BYTES + FLAGS, value);
            flags[i] = value;
        }
    }

    /** Points request {@code i}'s {@code next} at request {@code i + 1} again. */
    private void link(int i) {
        wrView.putLong(i * WR_BYTES + NEXT, wrs.address() + (long) (i + 1) * WR_BYTES);
    }

    private void checkIndex(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("request " + i + " of a post list of " + count);
        }
        checkOpen();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("send post list closed");
        }
    }

    int length(int i) {
        return length[i];
    }

    MemorySegment first() {
        checkOpen();
        return first;
    }

    /** Clears {@code bad_wr} before a post. */
    void resetBadWr() {
        checkOpen();
        badWrView.putLong(0, 0L);
    }

    MemorySegment badWr() {
        return badWr;
    }

    /** @return the first request's address, for a post ({@link InlineVerbs}); throws once closed */
    long firstAddress() {
        checkOpen();
        return first.address();
    }

    /** @return where a failed post writes {@code bad_wr} */
    long badWrAddress() {
        return badWrView.addressOffset();
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            arena.close();
        }
    }
}
