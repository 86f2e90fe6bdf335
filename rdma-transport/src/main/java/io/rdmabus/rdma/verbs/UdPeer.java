package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.ibv_ah_attr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Where to send UD datagrams: a copy of {@code struct ibv_ah_attr}, the remote QP number
 * ({@code 0xFFFFFF} for a multicast group) and the Q_Key, as reported by rdma_cm.
 *
 * @param ahAttr     the raw {@code struct ibv_ah_attr} bytes
 * @param remoteQpn  destination QP number
 * @param qkey       destination Q_Key
 */
public record UdPeer(byte[] ahAttr, int remoteQpn, int qkey) {
    /** Creates an address handle for this peer in {@code pd}. */
    public AddressHandle createAddressHandle(ProtectionDomain pd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_ah_attr.allocate(arena);
            MemorySegment.copy(MemorySegment.ofArray(ahAttr), 0, attr, 0, ibv_ah_attr.sizeof());
            return pd.createAddressHandle(attr);
        }
    }
}
