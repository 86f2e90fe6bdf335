package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_mr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A registered memory region over off-heap memory from an {@link Arena} this object owns.
 * Closing deregisters the region, then frees the memory; the segment is unusable afterwards.
 */
public final class MemoryRegion extends NativeResource {
    private static final MethodHandle REG = Native.capturing(RdmaCm.ibv_reg_mr_iova2$address(), RdmaCm.ibv_reg_mr_iova2$descriptor());
    private static final MethodHandle DEREG = Native.capturing(RdmaCm.ibv_dereg_mr$address(), RdmaCm.ibv_dereg_mr$descriptor());
    private static final long PAGE_BYTES = 4096;

    private final Arena arena;
    private final MemorySegment buffer;
    private final MemorySegment mr;
    private final int lkey;
    private final int rkey;

    MemoryRegion(ProtectionDomain pd, long sizeBytes, int access) {
        super("MemoryRegion", pd);
        this.arena = Arena.ofShared();
        MemorySegment m;
        try {
            this.buffer = arena.allocate(sizeBytes, PAGE_BYTES);
            // ibv_reg_mr is a macro; ibv_reg_mr_iova2 with iova == address is what it expands to.
            m = Native.callPointer("ibv_reg_mr", REG, pd.segment(), buffer, sizeBytes, buffer.address(), access);
        } catch (RuntimeException e) {
            arena.close();
            close();
            throw e;
        }
        this.mr = m.reinterpret(ibv_mr.sizeof());
        this.lkey = ibv_mr.lkey(mr);
        this.rkey = ibv_mr.rkey(mr);
    }

    /** @return the registered memory (valid until close) */
    public MemorySegment segment() {
        checkOpen();
        return buffer;
    }

    /** @return virtual address of the buffer, as a peer uses it for RDMA READ/WRITE */
    public long address() {
        return buffer.address();
    }

    /** @return size in bytes */
    public long sizeBytes() {
        return buffer.byteSize();
    }

    /** @return local key for scatter/gather entries */
    public int lkey() {
        return lkey;
    }

    /** @return remote key a peer needs for RDMA READ/WRITE */
    public int rkey() {
        return rkey;
    }

    @Override
    void release() {
        try {
            if (mr != null) {
                Native.callInt("ibv_dereg_mr", DEREG, mr);
            }
        } finally {
            if (arena.scope().isAlive()) {
                arena.close();
            }
        }
    }
}
