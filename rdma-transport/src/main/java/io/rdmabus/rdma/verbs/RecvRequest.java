package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.ibv_recv_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** A reusable, preallocated receive work request with one scatter/gather entry. Not thread-safe. */
public final class RecvRequest implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment wr = ibv_recv_wr.allocate(arena);
    private final MemorySegment sge = ibv_sge.allocate(arena);
    private final MemorySegment badWr = arena.allocate(ValueLayout.ADDRESS);
    private boolean closed;

    /** Creates an empty request. */
    public RecvRequest() {
        ibv_recv_wr.sg_list(wr, sge);
        ibv_recv_wr.num_sge(wr, 1);
    }

    /** Receive into {@code lengthBytes} at {@code offset} of {@code mr} (needs LOCAL_WRITE; UD needs 40 extra bytes for the GRH). */
    public RecvRequest prepare(long wrId, MemoryRegion mr, long offset, int lengthBytes) {
        if (offset < 0 || lengthBytes < 0 || offset + lengthBytes > mr.sizeBytes()) {
            throw new IndexOutOfBoundsException("range [" + offset + ", +" + lengthBytes + ") outside memory region of "
                    + mr.sizeBytes() + " bytes");
        }
        ibv_recv_wr.wr_id(wr, wrId);
        ibv_recv_wr.next(wr, MemorySegment.NULL);
        ibv_sge.addr(sge, mr.address() + offset);
        ibv_sge.length(sge, lengthBytes);
        ibv_sge.lkey(sge, mr.lkey());
        return this;
    }

    MemorySegment wr() {
        return wr;
    }

    MemorySegment badWr() {
        return badWr;
    }

    /** @return the request's address, for a post ({@link InlineVerbs}); throws once closed */
    long wrAddress() {
        if (closed) {
            throw new IllegalStateException("work request closed");
        }
        return wr.address();
    }

    /** @return where a failed post writes {@code bad_wr} */
    long badWrAddress() {
        return badWr.address();
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            closed = true;
            arena.close();
        }
    }
}
