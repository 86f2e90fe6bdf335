package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;

/** {@code enum rdma_cm_event_type}. */
public enum CmEventType {
    /** Address resolved. */
    ADDR_RESOLVED(RdmaCm.RDMA_CM_EVENT_ADDR_RESOLVED()),
    /** Address resolution failed. */
    ADDR_ERROR(RdmaCm.RDMA_CM_EVENT_ADDR_ERROR()),
    /** Route resolved. */
    ROUTE_RESOLVED(RdmaCm.RDMA_CM_EVENT_ROUTE_RESOLVED()),
    /** Route resolution failed. */
    ROUTE_ERROR(RdmaCm.RDMA_CM_EVENT_ROUTE_ERROR()),
    /** A peer wants to connect (passive side). */
    CONNECT_REQUEST(RdmaCm.RDMA_CM_EVENT_CONNECT_REQUEST()),
    /** Connect response (only without a QP). */
    CONNECT_RESPONSE(RdmaCm.RDMA_CM_EVENT_CONNECT_RESPONSE()),
    /** Connection failed. */
    CONNECT_ERROR(RdmaCm.RDMA_CM_EVENT_CONNECT_ERROR()),
    /** Peer unreachable. */
    UNREACHABLE(RdmaCm.RDMA_CM_EVENT_UNREACHABLE()),
    /** Peer rejected (or nobody listens on the port). */
    REJECTED(RdmaCm.RDMA_CM_EVENT_REJECTED()),
    /** Connection established. */
    ESTABLISHED(RdmaCm.RDMA_CM_EVENT_ESTABLISHED()),
    /** Disconnected. */
    DISCONNECTED(RdmaCm.RDMA_CM_EVENT_DISCONNECTED()),
    /** Device removed. */
    DEVICE_REMOVAL(RdmaCm.RDMA_CM_EVENT_DEVICE_REMOVAL()),
    /** Multicast group joined. */
    MULTICAST_JOIN(RdmaCm.RDMA_CM_EVENT_MULTICAST_JOIN()),
    /** Multicast join failed. */
    MULTICAST_ERROR(RdmaCm.RDMA_CM_EVENT_MULTICAST_ERROR()),
    /** Local address changed. */
    ADDR_CHANGE(RdmaCm.RDMA_CM_EVENT_ADDR_CHANGE()),
    /** QP left time-wait. */
    TIMEWAIT_EXIT(RdmaCm.RDMA_CM_EVENT_TIMEWAIT_EXIT()),
    /** A value this enum does not know. */
    UNKNOWN(-1);

    private final int value;

    CmEventType(int value) {
        this.value = value;
    }

    static CmEventType of(int v) {
        for (CmEventType t : values()) {
            if (t.value == v) {
                return t;
            }
        }
        return UNKNOWN;
    }
}
