package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_send_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_sge;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * A reusable, preallocated send work request with one scatter/gather entry. Set it up with one of
 * the {@code prepare*} methods and post it; nothing is allocated per post. Not thread-safe.
 *
 * <p>The fields are written with plain stores through {@link UnsafeBuffer}s over the native request, at the generated
 * layouts' offsets ({@link SendWrLayout}), as {@link SendRequestList} writes its requests: not a memory-segment access
 * (bounds, scope and alignment checks) per field, which the JIT under emulation is slow to make cheap.
 */
public final class SendRequest implements AutoCloseable {
    private static final int SEND = RdmaCm.IBV_WR_SEND();
    private static final int RDMA_WRITE = RdmaCm.IBV_WR_RDMA_WRITE();
    private static final int RDMA_READ = RdmaCm.IBV_WR_RDMA_READ();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment wr = ibv_send_wr.allocate(arena);
    private final MemorySegment sge = ibv_sge.allocate(arena);
    private final MemorySegment badWr = arena.allocate(ValueLayout.ADDRESS);
    private final UnsafeBuffer wrView = new UnsafeBuffer(wr.address(), SendWrLayout.WR_BYTES);
    private final UnsafeBuffer sgeView = new UnsafeBuffer(sge.address(), SendWrLayout.SGE_BYTES);
    private boolean closed;
    private int length;

    /** Creates an empty request. */
    public SendRequest() {
        ibv_send_wr.sg_list(wr, sge);
        ibv_send_wr.num_sge(wr, 1);
    }

    /** SEND of {@code lengthBytes} at {@code offset} of {@code mr}; signaled requests produce a completion. */
    public SendRequest prepareSend(long wrId, MemoryRegion mr, long offset, int lengthBytes, boolean signaled) {
        return prepare(SEND, wrId, mr, offset, lengthBytes, signaled);
    }

    /** RDMA WRITE of local bytes into the peer's registered memory at {@code remoteAddress} with {@code rkey}. */
    public SendRequest prepareRdmaWrite(long wrId, MemoryRegion mr, long offset, int lengthBytes, long remoteAddress, int rkey,
                                        boolean signaled) {
        prepare(RDMA_WRITE, wrId, mr, offset, lengthBytes, signaled);
        return remote(remoteAddress, rkey);
    }

    /** RDMA READ of the peer's memory into local {@code mr} (which needs LOCAL_WRITE). */
    public SendRequest prepareRdmaRead(long wrId, MemoryRegion mr, long offset, int lengthBytes, long remoteAddress, int rkey,
                                       boolean signaled) {
        prepare(RDMA_READ, wrId, mr, offset, lengthBytes, signaled);
        return remote(remoteAddress, rkey);
    }

    /**
     * Marks the prepared SEND inline (after {@link #prepareSend}): the provider copies the bytes into the work request
     * at post time, so the device (or rxe) reads no registered memory for it. The QP must have been created with
     * {@link QueuePairSpec#maxInlineBytes()} of at least the length.
     */
    public SendRequest inline() {
        checkOpen();
        wrView.putInt(SendWrLayout.FLAGS, wrView.getInt(SendWrLayout.FLAGS) | SendWrLayout.INLINE);
        return this;
    }

    /** Sets the UD destination (after {@link #prepareSend}). */
    public SendRequest toUd(AddressHandle ah, int remoteQpn, int remoteQkey) {
        checkOpen();
        wrView.putLong(SendWrLayout.UD_AH, ah.segment().address());
        wrView.putInt(SendWrLayout.UD_QPN, remoteQpn);
        wrView.putInt(SendWrLayout.UD_QKEY, remoteQkey);
        return this;
    }

    /** Sets the remote address and key of an RDMA WRITE or READ. */
    SendRequest remote(long remoteAddress, int rkey) {
        wrView.putLong(SendWrLayout.RDMA_REMOTE_ADDR, remoteAddress);
        wrView.putInt(SendWrLayout.RDMA_RKEY, rkey);
        return this;
    }

    private SendRequest prepare(int opcode, long wrId, MemoryRegion mr, long offset, int lengthBytes, boolean signaled) {
        return prepare(opcode, wrId, mr.address(), mr.sizeBytes(), mr.lkey(), offset, lengthBytes, signaled);
    }

    /** {@code prepare*} of a region at {@code regionAddress} of {@code regionBytes} with {@code regionLkey}. */
    SendRequest prepare(int opcode, long wrId, long regionAddress, long regionBytes, int regionLkey, long offset, int lengthBytes,
                        boolean signaled) {
        if (offset < 0 || lengthBytes < 0 || offset + lengthBytes > regionBytes) {
            throw new IndexOutOfBoundsException("range [" + offset + ", +" + lengthBytes + ") outside memory region of "
                    + regionBytes + " bytes");
        }
        checkOpen();
        wrView.putLong(SendWrLayout.WR_ID, wrId);
        wrView.putLong(SendWrLayout.NEXT, 0L);
        wrView.putInt(SendWrLayout.OPCODE, opcode);
        wrView.putInt(SendWrLayout.FLAGS, signaled ? SendWrLayout.SIGNALED : 0);
        sgeView.putLong(SendWrLayout.SGE_ADDR, regionAddress + offset);
        sgeView.putInt(SendWrLayout.SGE_LENGTH, lengthBytes);
        sgeView.putInt(SendWrLayout.SGE_LKEY, regionLkey);
        this.length = lengthBytes;
        return this;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("work request closed");
        }
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

    /** @return the request's address, for a post ({@link InlineVerbs}); throws once closed */
    long wrAddress() {
        checkOpen();
        return wrView.addressOffset();
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
