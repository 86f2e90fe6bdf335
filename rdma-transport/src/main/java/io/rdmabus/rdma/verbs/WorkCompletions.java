package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_wc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A preallocated array of {@code struct ibv_wc} for {@link CompletionQueue#poll}. Accessors read
 * entry {@code i} of the last poll without allocating. One instance per polling thread.
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

    private final Arena arena = Arena.ofShared();
    private final MemorySegment wcs;
    private final int capacity;
    int count;

    /** @param capacity entries polled at most per call */
    public WorkCompletions(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be > 0, got " + capacity);
        }
        this.capacity = capacity;
        this.wcs = ibv_wc.allocateArray(capacity, arena);
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
        return wcs.get(ibv_wc.wr_id$layout(), i * SIZE + ibv_wc.wr_id$offset());
    }

    /** @return {@code enum ibv_wc_status} of entry i ({@link #SUCCESS} = 0) */
    public int status(int i) {
        return wcs.get(ibv_wc.status$layout(), i * SIZE + ibv_wc.status$offset());
    }

    /** @return {@code enum ibv_wc_opcode} of entry i */
    public int opcode(int i) {
        return wcs.get(ibv_wc.opcode$layout(), i * SIZE + ibv_wc.opcode$offset());
    }

    /** @return bytes received (receive completions; UD includes the 40-byte GRH) */
    public int byteLength(int i) {
        return wcs.get(ibv_wc.byte_len$layout(), i * SIZE + ibv_wc.byte_len$offset());
    }

    /** @return source QP number (UD receives) */
    public int sourceQp(int i) {
        return wcs.get(ibv_wc.src_qp$layout(), i * SIZE + ibv_wc.src_qp$offset());
    }

    /** @return human-readable status, e.g. "remote access error" (allocates: for errors and logs) */
    public static String statusText(int status) {
        return RdmaCm.ibv_wc_status_str(status).reinterpret(128).getString(0);
    }

    MemorySegment segment() {
        return wcs;
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
