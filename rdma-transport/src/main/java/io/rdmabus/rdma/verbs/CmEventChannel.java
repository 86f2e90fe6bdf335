package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_ah_attr;
import io.rdmabus.rdma.verbs.ffm.rdma_cm_event;
import io.rdmabus.rdma.verbs.ffm.rdma_conn_param;
import io.rdmabus.rdma.verbs.ffm.rdma_event_channel;
import io.rdmabus.rdma.verbs.ffm.rdma_ud_param;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * An rdma_cm event channel. Control path: {@link #next} waits (bounded) for the next event for a given
 * id, copies it out and acknowledges it; events for other ids on the same channel are kept for them.
 */
public final class CmEventChannel extends NativeResource {
    private static final MethodHandle CREATE =
            Native.capturing(RdmaCm.rdma_create_event_channel$address(), RdmaCm.rdma_create_event_channel$descriptor());
    private static final MethodHandle GET = Native.capturing(RdmaCm.rdma_get_cm_event$address(), RdmaCm.rdma_get_cm_event$descriptor());
    private static final MethodHandle ACK = Native.capturing(RdmaCm.rdma_ack_cm_event$address(), RdmaCm.rdma_ack_cm_event$descriptor());

    private final MemorySegment channel;
    private final int fd;
    private final List<CmEvent> pending = new ArrayList<>();
    /** Scratch for poll(2), owned here so that an idle cm agent's bounded waits allocate nothing. */
    private final Arena arena = Arena.ofShared();
    private final MemorySegment pollFd;
    private final MemorySegment pollErrno;

    /** Creates an event channel. */
    public CmEventChannel() {
        super("CmEventChannel");
        this.channel = Native.callPointer("rdma_create_event_channel", CREATE).reinterpret(rdma_event_channel.sizeof());
        this.fd = rdma_event_channel.fd(channel);
        MemorySegment[] scratch = Native.pollScratch(arena);
        this.pollFd = scratch[0];
        this.pollErrno = scratch[1];
    }

    /**
     * Waits for the next event addressed to {@code idAddress} (CONNECT_REQUEST events count for their listening id).
     *
     * @return the event, or null on timeout
     */
    synchronized CmEvent next(long idAddress, long timeoutMs) {
        checkOpen();
        long deadlineNs = System.nanoTime() + timeoutMs * 1_000_000L;
        while (true) {
            for (int i = 0; i < pending.size(); i++) {
                if (owner(pending.get(i)) == idAddress) {
                    return pending.remove(i);
                }
            }
            long leftMs = (deadlineNs - System.nanoTime()) / 1_000_000L;
            if (leftMs <= 0 || !Native.pollReadable(fd, leftMs, pollFd, pollErrno)) {
                return null;
            }
            pending.add(readOne());
        }
    }

    /**
     * Reads the events already queued (no wait) and takes a DISCONNECTED event for {@code idAddress} if one is pending.
     *
     * @return true if the id got DISCONNECTED
     */
    synchronized boolean takeDisconnected(long idAddress) {
        checkOpen();
        while (Native.pollReadable(fd, 0, pollFd, pollErrno)) {
            pending.add(readOne());
        }
        boolean found = false;
        for (int i = pending.size() - 1; i >= 0; i--) {
            CmEvent e = pending.get(i);
            if (e.idAddress() == idAddress && e.type() == CmEventType.DISCONNECTED) {
                pending.remove(i);
                found = true;
            }
        }
        return found;
    }

    /**
     * Drops the pending events of a destroyed id (its address may be reused by the next id). A no-op on a closed channel.
     *
     * @param idAddress the destroyed id's address
     */
    synchronized void forget(long idAddress) {
        if (!isClosed()) {
            pending.removeIf(e -> e.idAddress() == idAddress || e.listenIdAddress() == idAddress);
        }
    }

    private static long owner(CmEvent e) {
        return e.type() == CmEventType.CONNECT_REQUEST && e.listenIdAddress() != 0 ? e.listenIdAddress() : e.idAddress();
    }

    private CmEvent readOne() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            Native.callInt("rdma_get_cm_event", GET, channel, out);
            MemorySegment ev = out.get(ValueLayout.ADDRESS, 0).reinterpret(rdma_cm_event.sizeof());
            try {
                CmEventType type = CmEventType.of(rdma_cm_event.event(ev));
                int status = rdma_cm_event.status(ev);
                long id = rdma_cm_event.id(ev).address();
                long listenId = rdma_cm_event.listen_id(ev).address();
                MemorySegment param = rdma_cm_event.param(ev);
                UdPeer ud = null;
                byte[] priv;
                boolean udEvent = type == CmEventType.MULTICAST_JOIN
                        || (type == CmEventType.ESTABLISHED && isUdp(rdma_cm_event.id(ev)));
                if (udEvent) {
                    MemorySegment u = rdma_cm_event.param.ud(param);
                    priv = copy(rdma_ud_param.private_data(u), Byte.toUnsignedInt(rdma_ud_param.private_data_len(u)));
                    byte[] ah = rdma_ud_param.ah_attr(u).asSlice(0, ibv_ah_attr.sizeof()).toArray(ValueLayout.JAVA_BYTE);
                    ud = new UdPeer(ah, rdma_ud_param.qp_num(u), rdma_ud_param.qkey(u));
                } else {
                    MemorySegment c = rdma_cm_event.param.conn(param);
                    priv = copy(rdma_conn_param.private_data(c), Byte.toUnsignedInt(rdma_conn_param.private_data_len(c)));
                }
                return new CmEvent(type, status, id, listenId, priv, ud, System.nanoTime());
            } finally {
                Native.callInt("rdma_ack_cm_event", ACK, ev);
            }
        }
    }

    private static boolean isUdp(MemorySegment id) {
        return io.rdmabus.rdma.verbs.ffm.rdma_cm_id.ps(id.reinterpret(io.rdmabus.rdma.verbs.ffm.rdma_cm_id.sizeof()))
                == RdmaCm.RDMA_PS_UDP();
    }

    private static byte[] copy(MemorySegment p, int len) {
        if (p.equals(MemorySegment.NULL) || len == 0) {
            return new byte[0];
        }
        return p.reinterpret(len).toArray(ValueLayout.JAVA_BYTE);
    }

    MemorySegment segment() {
        checkOpen();
        return channel;
    }

    @Override
    void release() {
        try {
            RdmaCm.rdma_destroy_event_channel(channel);
        } finally {
            arena.close();
        }
    }
}
