package io.rdmabus.rdma.verbs;

/**
 * Port attributes ({@code struct ibv_port_attr}, the fields the transport uses).
 *
 * @param state            {@code enum ibv_port_state} (4 = ACTIVE)
 * @param maxMtuBytes      largest MTU the port supports, in bytes
 * @param activeMtuBytes   MTU in use, in bytes: the largest UD payload
 * @param gidTableLength   GID table entries
 * @param maxMessageBytes  largest message
 * @param lid              local identifier (0 on RoCE)
 * @param linkLayer        1 = InfiniBand, 2 = Ethernet (RoCE)
 */
public record PortAttributes(int state, int maxMtuBytes, int activeMtuBytes, int gidTableLength, long maxMessageBytes, int lid,
                             int linkLayer) {
    /** {@code IBV_PORT_ACTIVE}. */
    public static final int STATE_ACTIVE = 4;

    /** @return true if the port is ACTIVE */
    public boolean isActive() {
        return state == STATE_ACTIVE;
    }

    /** Converts {@code enum ibv_mtu} (1..5) to bytes (256..4096); 0 if unknown. */
    static int mtuBytes(int ibvMtu) {
        return ibvMtu >= 1 && ibvMtu <= 5 ? 128 << ibvMtu : 0;
    }
}
