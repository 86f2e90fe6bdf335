package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_ah_attr;
import io.rdmabus.rdma.verbs.ffm.ibv_qp_cap;
import io.rdmabus.rdma.verbs.ffm.ibv_qp_init_attr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A protection domain. Refuses to close while memory regions, queue pairs or address handles
 * created from it are open (see {@link NativeResource}).
 */
public final class ProtectionDomain extends NativeResource {
    private static final MethodHandle ALLOC = Native.capturing(RdmaCm.ibv_alloc_pd$address(), RdmaCm.ibv_alloc_pd$descriptor());
    private static final MethodHandle DEALLOC = Native.capturing(RdmaCm.ibv_dealloc_pd$address(), RdmaCm.ibv_dealloc_pd$descriptor());
    private static final MethodHandle CREATE_QP = Native.capturing(RdmaCm.ibv_create_qp$address(), RdmaCm.ibv_create_qp$descriptor());
    private static final MethodHandle CREATE_AH = Native.capturing(RdmaCm.ibv_create_ah$address(), RdmaCm.ibv_create_ah$descriptor());

    private final VerbsContext context;
    private final MemorySegment pd;

    ProtectionDomain(VerbsContext context) {
        super("ProtectionDomain", context);
        this.context = context;
        MemorySegment p;
        try {
            p = Native.callPointer("ibv_alloc_pd", ALLOC, context.segment());
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        this.pd = p;
    }

    /** @return the context this PD belongs to */
    public VerbsContext context() {
        return context;
    }

    /**
     * Allocates {@code sizeBytes} of off-heap memory (page aligned, owned by the region) and registers it.
     *
     * @param access bit set of {@link Access} flags: give only what the use needs (LOCAL_WRITE for receive
     *               buffers, REMOTE_WRITE/REMOTE_READ only for one-sided targets)
     */
    public MemoryRegion registerMemory(long sizeBytes, int access) {
        checkOpen();
        if (sizeBytes <= 0) {
            throw new IllegalArgumentException("memory region size must be > 0 bytes, got " + sizeBytes);
        }
        return new MemoryRegion(this, sizeBytes, access);
    }

    /**
     * Creates a queue pair (RC or UD) with its own send/receive CQs (may be the same CQ).
     *
     * @param spec capacities and type
     */
    public QueuePair createQueuePair(QueuePairSpec spec, CompletionQueue sendCq, CompletionQueue recvCq) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = fillInitAttr(arena, spec, sendCq, recvCq);
            MemorySegment qp = Native.callPointer("ibv_create_qp", CREATE_QP, pd, attr);
            return new QueuePair(this, sendCq, recvCq, qp, spec, null, grantedInlineBytes(attr));
        }
    }

    /** @return {@code cap.max_inline_data} of an init attr after the create call wrote back what the device granted */
    static int grantedInlineBytes(MemorySegment initAttr) {
        return ibv_qp_cap.max_inline_data(ibv_qp_init_attr.cap(initAttr));
    }

    static MemorySegment fillInitAttr(Arena arena, QueuePairSpec spec, CompletionQueue sendCq, CompletionQueue recvCq) {
        MemorySegment attr = ibv_qp_init_attr.allocate(arena);
        ibv_qp_init_attr.send_cq(attr, sendCq.segment());
        ibv_qp_init_attr.recv_cq(attr, recvCq.segment());
        MemorySegment cap = ibv_qp_init_attr.cap(attr);
        ibv_qp_cap.max_send_wr(cap, spec.maxSendWr());
        ibv_qp_cap.max_recv_wr(cap, spec.maxRecvWr());
        ibv_qp_cap.max_send_sge(cap, 1);
        ibv_qp_cap.max_recv_sge(cap, 1);
        ibv_qp_cap.max_inline_data(cap, spec.maxInlineBytes());
        ibv_qp_init_attr.qp_type(attr, spec.type().ibvValue());
        ibv_qp_init_attr.sq_sig_all(attr, 0);
        return attr;
    }

    /**
     * Creates an address handle from a {@code struct ibv_ah_attr} (as delivered by rdma_cm for UD peers and
     * multicast groups, see {@link UdPeer}).
     */
    public AddressHandle createAddressHandle(MemorySegment ahAttr) {
        checkOpen();
        if (ahAttr.byteSize() < ibv_ah_attr.sizeof()) {
            throw new IllegalArgumentException("ah_attr segment too small: " + ahAttr.byteSize() + " bytes");
        }
        return new AddressHandle(this, Native.callPointer("ibv_create_ah", CREATE_AH, pd, ahAttr));
    }

    MemorySegment segment() {
        checkOpen();
        return pd;
    }

    @Override
    void release() {
        if (pd != null) {
            Native.callInt("ibv_dealloc_pd", DEALLOC, pd);
        }
    }
}
