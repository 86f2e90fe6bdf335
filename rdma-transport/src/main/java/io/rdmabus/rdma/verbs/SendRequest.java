package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_send_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A reusable, preallocated send work request with one scatter/gather entry. Set it up with one of
 * the {@code prepare*} methods and post it; nothing is allocated per post. Not thread-safe.
 */
public final class SendRequest implements AutoCloseable {
    private static final int SIGNALED = RdmaCm.IBV_SEND_SIGNALED();
    private static final int INLINE = RdmaCm.IBV_SEND_INLINE();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment wr = ibv_send_wr.allocate(arena);
    private final MemorySegment sge = ibv_sge.allocate(arena);
    private final MemorySegment badWr = arena.allocate(ValueLayout.ADDRESS);
    private final MemorySegment rdma = ibv_send_wr.wr.rdma(ibv_send_wr.wr(wr));
    private final MemorySegment ud = ibv_send_wr.wr.ud(ibv_send_wr.wr(wr));
    private int length;

    /** Creates an empty request. */
    public SendRequest() {
        ibv_send_wr.sg_list(wr, sge);
        ibv_send_wr.num_sge(wr, 1);
    }

    /** SEND of {@code lengthBytes} at {@code offset} of {@code mr}; signaled requests produce a completion. */
    public SendRequest prepareSend(long wrId, MemoryRegion mr, long offset, int lengthBytes, boolean signaled) {
        return prepare(RdmaCm.IBV_WR_SEND(), wrId, mr, offset, lengthBytes, signaled);
    }

    /** RDMA WRITE of local bytes into the peer's registered memory at {@code remoteAddress} with {@code rkey}. */
    public SendRequest prepareRdmaWrite(long wrId, MemoryRegion mr, long offset, int lengthBytes, long remoteAddress, int rkey,
                                        boolean signaled) {
        prepare(RdmaCm.IBV_WR_RDMA_WRITE(), wrId, mr, offset, lengthBytes, signaled);
        ibv_send_wr.wr.rdma.remote_addr(rdma, remoteAddress);
        ibv_send_wr.wr.rdma.rkey(rdma, rkey);
        return this;
    }

    /** RDMA READ of the peer's memory into local {@code mr} (which needs LOCAL_WRITE). */
    public SendRequest prepareRdmaRead(long wrId, MemoryRegion mr, long offset, int lengthBytes, long remoteAddress, int rkey,
                                       boolean signaled) {
        prepare(RdmaCm.IBV_WR_RDMA_READ(), wrId, mr, offset, lengthBytes, signaled);
        ibv_send_wr.wr.rdma.remote_addr(rdma, remoteAddress);
        ibv_send_wr.wr.rdma.rkey(rdma, rkey);
        return this;
    }

    /**
     * Marks the prepared SEND inline (after {@link #prepareSend}): the provider copies the bytes into the work request
     * at post time, so the device (or rxe) reads no registered memory for it. The QP must have been created with
     * {@link QueuePairSpec#maxInlineBytes()} of at least the length.
     */
    public SendRequest inline() {
        ibv_send_wr.send_flags(wr, ibv_send_wr.send_flags(wr) | INLINE);
        return this;
    }

    /** Sets the UD destination (after {@link #prepareSend}). */
    public SendRequest toUd(AddressHandle ah, int remoteQpn, int remoteQkey) {
        ibv_send_wr.wr.ud.ah(ud, ah.segment());
        ibv_send_wr.wr.ud.remote_qpn(ud, remoteQpn);
        ibv_send_wr.wr.ud.remote_qkey(ud, remoteQkey);
        return this;
    }

    private SendRequest prepare(int opcode, long wrId, MemoryRegion mr, long offset, int lengthBytes, boolean signaled) {
        if (offset < 0 || lengthBytes < 0 || offset + lengthBytes > mr.sizeBytes()) {
            throw new IndexOutOfBoundsException("range [" + offset + ", +" + lengthBytes + ") outside memory region of "
                    + mr.sizeBytes() + " bytes");
        }
        ibv_send_wr.wr_id(wr, wrId);
        ibv_send_wr.next(wr, MemorySegment.NULL);
        ibv_send_wr.opcode(wr, opcode);
        ibv_send_wr.send_flags(wr, signaled ? SIGNALED : 0);
        ibv_sge.addr(sge, mr.address() + offset);
        ibv_sge.length(sge, lengthBytes);
        ibv_sge.lkey(sge, mr.lkey());
        this.length = lengthBytes;
        return this;
    }

    int length() {
        return length;
    }

    MemorySegment wr() {
        return wr;
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
