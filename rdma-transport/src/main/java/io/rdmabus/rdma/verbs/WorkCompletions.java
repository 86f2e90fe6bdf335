package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_wc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * A preallocated array of {@code struct ibv_wc} for {@link CompletionQueue#poll}. Accessors read
 * entry {@code i} of the last poll without allocating. One instance per polling thread.
 *
 * <p>The reads are plain loads through an {@link UnsafeBuffer} over the native array at the generated layout's field
 * offsets (as {@link SendRequestList} writes), not a memory-segment access per field: each of those checks bounds,
 * scope and alignment, which the emulated lab's JIT was slow to fold away (the poller reads four fields per
 * completion). Reading after {@link #close} throws.
 */
public final class WorkCompletions implements AutoCloseable {
    /** {@code IBV_WC_SUCCESS}. */
    public static final int SUCCESS = RdmaCm.IBV_WC_SUCCESS();
    /** {@code IBV_WC_WR_FLUSH_ERR}: the QP was in the error state, the request was flushed. */
    public static final int WR_FLUSH_ERR = RdmaCm.IBV_WC_WR_FLUSH_ERR();
    /** {@code IBV_WC_REM_ACCESS_ERR}: wrong rkey or range at the remote side. */
    public static final int REM_ACCESS_ERR = RdmaCm.IBV_WC_REM_ACCESS_ERR();
    /** {@code IBV_WC_RETRY_EXC_ERR}: the peer never acknowledged (RC retries ran out): it is gone or unreachable. */
    public static final int RETRY_EXC_ERR = RdmaCm.IBV_WC_RETRY_EXC_ERR();
    /** {@code IBV_WC_RECV} opcode. */
    public static final int OPCODE_RECV = RdmaCm.IBV_WC_RECV();

    private static final long SIZE = ibv_wc.sizeof();
    private static final int STRIDE = (int) SIZE;
    private static final int WR_ID = (int) ibv_wc.wr_id$offset();
    private static final int STATUS = (int) ibv_wc.status$offset();
    private static final int OPCODE = (int) ibv_wc.opcode$offset();
    private static final int BYTE_LEN = (int) ibv_wc.byte_len$offset();
    private static final int SRC_QP = (int) ibv_wc.src_qp$offset();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment wcs;
    private final UnsafeBuffer view;
    private final int capacity;
    private boolean closed;
    int count;

    /** @param capacity entries polled at most per call */
    public WorkCompletions(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be > 0, got " + capacity);
        }
        this.capacity = capacity;
        this.wcs = ibv_wc.allocateArray(capacity, arena);
        this.view = new UnsafeBuffer(wcs.address(), capacity * STRIDE);
    }

    /** @return entries per poll */
    public int capacity() {
        return capacity;
    }

    /** @return entries filled by the last poll */
    public int count() {
        return count;
    }

    /** @return work request id of entry i */
    public long wrId(int i) {
        return view.getLong(at(i) + WR_ID);
    }

    /** @return {@code enum ibv_wc_status} of entry i ({@link #SUCCESS} = 0) */
    public int status(int i) {
        return view.getInt(at(i) + STATUS);
    }

    /** @return {@code enum ibv_wc_opcode} of entry i */
    public int opcode(int i) {
        return view.getInt(at(i) + OPCODE);
    }

    /** @return bytes received (receive completions; UD includes the 40-byte GRH) */
    public int byteLength(int i) {
        return view.getInt(at(i) + BYTE_LEN);
    }

    /** @return source QP number (UD receives) */
    public int sourceQp(int i) {
        return view.getInt(at(i) + SRC_QP);
    }

    /** @return where entry {@code i} starts (the buffer checks the range; a closed array throws) */
    private int at(int i) {
        if (closed) {
            throw new IllegalStateException("work completions closed");
        }
        return i * STRIDE;
    }

    /** @return human-readable status, e.g. "remote access error" (allocates: for errors and logs) */
    public static String statusText(int status) {
        return RdmaCm.ibv_wc_status_str(status).reinterpret(128).getString(0);
    }

    MemorySegment segment() {
        return wcs;
    }

    /** @return the array's address, for a poll ({@link InlineVerbs}); throws once closed */
    long address() {
        if (closed) {
            throw new IllegalStateException("work completions closed");
        }
        return view.addressOffset();
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            closed = true;
            arena.close();
        }
    }
}
