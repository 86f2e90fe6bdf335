package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.ibv_ah_attr;
import io.rdmabus.rdma.verbs.ffm.ibv_global_route;

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
    /** The hop limit of unicast datagrams (the GRH is required on RoCE). */
    private static final int HOP_LIMIT = 64;

    /**
     * A unicast UD peer known by its GID (e.g. announced over a control connection), without rdma_cm route
     * resolution: a global route (RoCE needs the GRH) from our GID at {@code sgidIndex} on {@code port}.
     *
     * @param dgid      the peer's 16-byte GID (RoCEv2 over IPv4: {@code ::ffff:a.b.c.d}, see {@link #ipv4Gid})
     * @param sgidIndex index of our own GID in the port's GID table ({@link VerbsContext#findGidIndex})
     * @param port      our device port
     * @param remoteQpn the peer's UD QP number
     * @param qkey      the Q_Key the peer's QP accepts
     * @return the peer
     */
    public static UdPeer ofGid(byte[] dgid, int sgidIndex, int port, int remoteQpn, int qkey) {
        if (dgid == null || dgid.length != 16) {
            throw new IllegalArgumentException("a GID is 16 bytes, got " + (dgid == null ? "null" : dgid.length + " bytes"));
        }
        if (sgidIndex < 0 || sgidIndex > 255 || port < 1 || port > 255) {
            throw new IllegalArgumentException("bad sgid index " + sgidIndex + " or port " + port);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_ah_attr.allocate(arena);
            attr.fill((byte) 0);
            MemorySegment grh = ibv_ah_attr.grh(attr);
            MemorySegment.copy(MemorySegment.ofArray(dgid), 0, grh, ibv_global_route.dgid$offset(), 16);
            ibv_global_route.sgid_index(grh, (byte) sgidIndex);
            ibv_global_route.hop_limit(grh, (byte) HOP_LIMIT);
            ibv_ah_attr.is_global(attr, (byte) 1);
            ibv_ah_attr.port_num(attr, (byte) port);
            return new UdPeer(attr.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), remoteQpn, qkey);
        }
    }

    /**
     * @param ipv4 an IPv4 address as a big-endian int (a.b.c.d = {@code a << 24 | ...})
     * @return the RoCEv2 GID of that address, {@code ::ffff:a.b.c.d}
     */
    public static byte[] ipv4Gid(int ipv4) {
        byte[] gid = new byte[16];
        gid[10] = (byte) 0xFF;
        gid[11] = (byte) 0xFF;
        gid[12] = (byte) (ipv4 >>> 24);
        gid[13] = (byte) (ipv4 >>> 16);
        gid[14] = (byte) (ipv4 >>> 8);
        gid[15] = (byte) ipv4;
        return gid;
    }

    /** Creates an address handle for this peer in {@code pd}. */
    public AddressHandle createAddressHandle(ProtectionDomain pd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ibv_ah_attr.allocate(arena);
            MemorySegment.copy(MemorySegment.ofArray(ahAttr), 0, attr, 0, ibv_ah_attr.sizeof());
            return pd.createAddressHandle(attr);
        }
    }
}
