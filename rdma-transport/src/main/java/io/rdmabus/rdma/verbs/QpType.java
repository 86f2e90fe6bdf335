package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;

/** Queue pair transport types the project uses. */
public enum QpType {
    /** Reliable connected: ordered, acknowledged, supports RDMA READ/WRITE. */
    RC(RdmaCm.IBV_QPT_RC()),
    /** Unreliable datagram: one MTU per message, multicast capable. */
    UD(RdmaCm.IBV_QPT_UD());

    private final int ibv;

    QpType(int ibv) {
        this.ibv = ibv;
    }

    int ibvValue() {
        return ibv;
    }
}
