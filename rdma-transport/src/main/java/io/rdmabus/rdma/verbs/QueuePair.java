package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_qp;
import io.rdmabus.rdma.verbs.ffm.ibv_qp_attr;
import io.rdmabus.rdma.verbs.ffm.ibv_qp_init_attr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A queue pair. Posting is the data path: {@link #postSend}/{@link #postRecv} take a preallocated
 * request and return 0 or an errno value (the inline verbs return an errno, not -1), without allocating.
 * State transitions and queries are control path and throw {@link VerbsException}.
 * A QP created through rdma_cm ({@link CmId#createQueuePair}) is destroyed with {@code rdma_destroy_qp}.
 */
public final class QueuePair extends NativeResource {
    private static final MethodHandle DESTROY = Native.capturing(RdmaCm.ibv_destroy_qp$address(), RdmaCm.ibv_destroy_qp$descriptor());
    private static final MethodHandle MODIFY = Native.capturing(RdmaCm.ibv_modify_qp$address(), RdmaCm.ibv_modify_qp$descriptor());
    private static final MethodHandle QUERY = Native.capturing(RdmaCm.ibv_query_qp$address(), RdmaCm.ibv_query_qp$descriptor());
    /** {@code IBV_QPS_RESET} .. {@code IBV_QPS_ERR}. */
    public static final int STATE_RESET = RdmaCm.IBV_QPS_RESET();
    /** {@code IBV_QPS_INIT}. */
    public static final int STATE_INIT = RdmaCm.IBV_QPS_INIT();
    /** {@code IBV_QPS_RTR}. */
    public static final int STATE_RTR = RdmaCm.IBV_QPS_RTR();
    /** {@code IBV_QPS_RTS}. */
    public static final int STATE_RTS = RdmaCm.IBV_QPS_RTS();
    /** {@code IBV_QPS_ERR}. */
    public static final int STATE_ERROR = RdmaCm.IBV_QPS_ERR();

    private final ProtectionDomain pd;
    private final MemorySegment qp;
    private final long qpAddress;
    private final QueuePairSpec spec;
    private final CmId cmOwner;
    private final InlineVerbs verbs;
    private final int qpNum;
    private final int maxInlineBytes;
    private int maxUdPayloadBytes = Integer.MAX_VALUE;

    QueuePair(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, MemorySegment qp, QueuePairSpec spec,
              CmId cmOwner, int grantedInlineBytes) {
        super("QueuePair", pd, sendCq, recvCq == sendCq ? null : recvCq);
        this.pd = pd;
        this.qp = qp.reinterpret(ibv_qp.sizeof());
        this.qpAddress = qp.address();
        this.spec = spec;
        this.cmOwner = cmOwner;
        this.verbs = pd.context().inlineVerbs;
        this.qpNum = ibv_qp.qp_num(this.qp);
        this.maxInlineBytes = grantedInlineBytes;
        if (spec.type() == QpType.UD) {
            int port = cmOwner != null ? cmOwner.portNumber() : 1;
            maxUdPayloadBytes = pd.context().queryPort(port).activeMtuBytes();
        }
    }

    /** @return the QP number peers address */
    public int qpNumber() {
        return qpNum;
    }

    /** @return RC or UD */
    public QpType type() {
        return spec.type();
    }

    /** @return the largest UD payload (port active MTU) in bytes; {@code Integer.MAX_VALUE} for RC */
    public int maxUdPayloadBytes() {
        return maxUdPayloadBytes;
    }

    /**
     * @return the inline send size the device granted at creation ({@code cap.max_inline_data} as the create call
     *     returned it: at least what {@link QueuePairSpec#maxInlineBytes()} asked for, the provider may round it up)
     */
    public int maxInlineBytes() {
        return maxInlineBytes;
    }

    /** @return the protection domain */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /**
     * Posts one send work request (ctx->ops.post_send).
     *
     * @return 0 or an errno value (e.g. ENOMEM when the send queue is full)
     * @throws IllegalArgumentException for a UD payload larger than the path MTU (checked before posting)
     */
    public int postSend(SendRequest request) {
        checkOpen();
        if (spec.type() == QpType.UD && request.length() > maxUdPayloadBytes) {
            throw new IllegalArgumentException("UD payload of " + request.length() + " bytes exceeds the path MTU of "
                    + maxUdPayloadBytes + " bytes: split the message or use RC");
        }
        return verbs.postSend(qpAddress, request.wrAddress(), request.badWrAddress());
    }

    /**
     * Posts a list of send work requests with one call (ctx->ops.post_send over the linked list). On an error the
     * requests before {@link SendRequestList#failedIndex()} were posted, that one and the rest were not.
     *
     * @return 0 (all posted) or an errno value
     * @throws IllegalArgumentException for a UD payload larger than the path MTU (checked before posting anything)
     */
    public int postSend(SendRequestList list) {
        checkOpen();
        int n = list.count();
        if (n == 0) {
            return 0;
        }
        if (spec.type() == QpType.UD) {
            for (int i = 0; i < n; i++) {
                if (list.length(i) > maxUdPayloadBytes) {
                    throw new IllegalArgumentException("UD payload of " + list.length(i) + " bytes exceeds the path MTU of "
                            + maxUdPayloadBytes + " bytes: split the message or use RC");
                }
            }
        }
        list.resetBadWr();
        return verbs.postSend(qpAddress, list.firstAddress(), list.badWrAddress());
    }

    /**
     * Posts a list of receive work requests with one call (ctx->ops.post_recv over the linked list). On an error the
     * requests before {@link RecvRequestList#failedIndex()} were posted, that one and the rest were not.
     *
     * @return 0 (all posted) or an errno value
     */
    public int postRecv(RecvRequestList list) {
        checkOpen();
        if (list.count() == 0) {
            return 0;
        }
        list.resetBadWr();
        return verbs.postRecv(qpAddress, list.firstAddress(), list.badWrAddress());
    }

    /**
     * Posts one receive work request (ctx->ops.post_recv).
     *
     * @return 0 or an errno value
     */
    public int postRecv(RecvRequest request) {
        checkOpen();
        return verbs.postRecv(qpAddress, request.wrAddress(), request.badWrAddress());
    }

    /** RESET to INIT for RC: port, pkey index 0 and the remote access this QP grants. */
    public void toInitRc(int port, int remoteAccess) {
        modify(a -> {
            ibv_qp_attr.qp_state(a, STATE_INIT);
            ibv_qp_attr.pkey_index(a, (short) 0);
            ibv_qp_attr.port_num(a, (byte) port);
            ibv_qp_attr.qp_access_flags(a, remoteAccess);
        }, RdmaCm.IBV_QP_STATE() | RdmaCm.IBV_QP_PKEY_INDEX() | RdmaCm.IBV_QP_PORT() | RdmaCm.IBV_QP_ACCESS_FLAGS());
    }

    /** RESET to INIT to RTR to RTS for UD with the given Q_Key. */
    public void toRtsUd(int port, int qkey) {
        modify(a -> {
            ibv_qp_attr.qp_state(a, STATE_INIT);
            ibv_qp_attr.pkey_index(a, (short) 0);
            ibv_qp_attr.port_num(a, (byte) port);
            ibv_qp_attr.qkey(a, qkey);
        }, RdmaCm.IBV_QP_STATE() | RdmaCm.IBV_QP_PKEY_INDEX() | RdmaCm.IBV_QP_PORT() | RdmaCm.IBV_QP_QKEY());
        modify(a -> ibv_qp_attr.qp_state(a, STATE_RTR), RdmaCm.IBV_QP_STATE());
        modify(a -> {
            ibv_qp_attr.qp_state(a, STATE_RTS);
            ibv_qp_attr.sq_psn(a, 0);
        }, RdmaCm.IBV_QP_STATE() | RdmaCm.IBV_QP_SQ_PSN());
    }

    /**
     * Changes the Q_Key of a UD QP that is already in RTS (RTS to RTS): the QP then accepts only datagrams that carry
     * it. rdma_cm gives every UDP-port-space QP the same well-known Q_Key; a bus sets its own.
     *
     * @param qkey the new Q_Key (high bit clear: controlled Q_Keys are privileged)
     */
    public void setUdQkey(int qkey) {
        if (spec.type() != QpType.UD) {
            throw new IllegalStateException("only UD QPs have a Q_Key");
        }
        if (qkey < 0) {
            throw new IllegalArgumentException("Q_Keys with the high bit set are controlled (privileged): " + Integer.toHexString(qkey));
        }
        modify(a -> {
            ibv_qp_attr.qp_state(a, STATE_RTS);
            ibv_qp_attr.qkey(a, qkey);
        }, RdmaCm.IBV_QP_STATE() | RdmaCm.IBV_QP_QKEY());
    }

    /** Moves the QP to the error state: outstanding and later requests complete with {@code IBV_WC_WR_FLUSH_ERR}. */
    public void toError() {
        modify(a -> ibv_qp_attr.qp_state(a, STATE_ERROR), RdmaCm.IBV_QP_STATE());
    }

    /** @return the current {@code enum ibv_qp_state} from {@code ibv_query_qp} */
    public int queryState() {
        return query(RdmaCm.IBV_QP_STATE(), ibv_qp_attr::qp_state);
    }

    /** @return the QP's local ACK timeout exponent ({@code ibv_qp_attr.timeout}: 4.096 us x 2^n; 0 = infinite) */
    public int queryAckTimeout() {
        return query(RdmaCm.IBV_QP_TIMEOUT(), a -> Byte.toUnsignedInt(ibv_qp_attr.timeout(a)));
    }

    /** {@code ibv_query_qp} of the attributes in {@code mask}; {@code field} reads the one wanted. */
    private int query(int mask, java.util.function.ToIntFunction<MemorySegment> field) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_qp_attr.allocate(arena);
            MemorySegment init = ibv_qp_init_attr.allocate(arena);
            Native.callInt("ibv_query_qp", QUERY, qp, attr, mask, init);
            return field.applyAsInt(attr);
        }
    }

    /** Applies an {@code ibv_modify_qp} with the attributes set by {@code filler} and {@code mask}. */
    public void modify(java.util.function.Consumer<MemorySegment> filler, int mask) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_qp_attr.allocate(arena);
            filler.accept(attr);
            Native.callInt("ibv_modify_qp", MODIFY, qp, attr, mask);
        }
    }

    MemorySegment segment() {
        checkOpen();
        return qp;
    }

    @Override
    void release() {
        if (cmOwner != null) {
            cmOwner.destroyQp();
        } else {
            Native.callInt("ibv_destroy_qp", DESTROY, qp);
        }
    }
}
