package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;

/** {@code enum ibv_access_flags} values for {@link ProtectionDomain#registerMemory}; combine with {@code |}. */
public final class Access {
    /** Local send buffers need no flag. */
    public static final int NONE = 0;
    /** The NIC writes into it locally: receive buffers, RDMA READ destinations. */
    public static final int LOCAL_WRITE = RdmaCm.IBV_ACCESS_LOCAL_WRITE();
    /** A peer may RDMA WRITE into it (requires LOCAL_WRITE). */
    public static final int REMOTE_WRITE = RdmaCm.IBV_ACCESS_REMOTE_WRITE();
    /** A peer may RDMA READ from it. */
    public static final int REMOTE_READ = RdmaCm.IBV_ACCESS_REMOTE_READ();

    private Access() {
    }
}
