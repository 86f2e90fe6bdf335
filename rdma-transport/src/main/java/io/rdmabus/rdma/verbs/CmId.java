package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.rdma_cm_id;
import io.rdmabus.rdma.verbs.ffm.rdma_conn_param;
import io.rdmabus.rdma.verbs.ffm.sockaddr_in;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * An rdma_cm identifier (like a socket): resolve address and route, connect, listen/accept, reject,
 * disconnect, and multicast join/leave. Every operation that completes with an event waits for it
 * (bounded) and throws {@link RdmaConnectException} on a failure event. IPv4 only.
 * Its verbs context ({@link #context()}) belongs to librdmacm; close the id after the QP, MRs, CQs and PD made on it.
 */
public final class CmId extends NativeResource {
    private static final MethodHandle CREATE = Native.capturing(RdmaCm.rdma_create_id$address(), RdmaCm.rdma_create_id$descriptor());
    private static final MethodHandle DESTROY = Native.capturing(RdmaCm.rdma_destroy_id$address(), RdmaCm.rdma_destroy_id$descriptor());
    private static final MethodHandle RESOLVE_ADDR =
            Native.capturing(RdmaCm.rdma_resolve_addr$address(), RdmaCm.rdma_resolve_addr$descriptor());
    private static final MethodHandle RESOLVE_ROUTE =
            Native.capturing(RdmaCm.rdma_resolve_route$address(), RdmaCm.rdma_resolve_route$descriptor());
    private static final MethodHandle BIND = Native.capturing(RdmaCm.rdma_bind_addr$address(), RdmaCm.rdma_bind_addr$descriptor());
    private static final MethodHandle LISTEN = Native.capturing(RdmaCm.rdma_listen$address(), RdmaCm.rdma_listen$descriptor());
    private static final MethodHandle CONNECT = Native.capturing(RdmaCm.rdma_connect$address(), RdmaCm.rdma_connect$descriptor());
    private static final MethodHandle ACCEPT = Native.capturing(RdmaCm.rdma_accept$address(), RdmaCm.rdma_accept$descriptor());
    private static final MethodHandle REJECT = Native.capturing(RdmaCm.rdma_reject$address(), RdmaCm.rdma_reject$descriptor());
    private static final MethodHandle DISCONNECT =
            Native.capturing(RdmaCm.rdma_disconnect$address(), RdmaCm.rdma_disconnect$descriptor());
    private static final MethodHandle CREATE_QP = Native.capturing(RdmaCm.rdma_create_qp$address(), RdmaCm.rdma_create_qp$descriptor());
    private static final MethodHandle JOIN = Native.capturing(RdmaCm.rdma_join_multicast$address(), RdmaCm.rdma_join_multicast$descriptor());
    private static final MethodHandle SET_OPTION =
            Native.capturing(RdmaCm.rdma_set_option$address(), RdmaCm.rdma_set_option$descriptor());
    private static final MethodHandle LEAVE =
            Native.capturing(RdmaCm.rdma_leave_multicast$address(), RdmaCm.rdma_leave_multicast$descriptor());

    /** rdma_cm port spaces. */
    public enum PortSpace {
        /** Connected (RC QPs). */
        TCP(RdmaCm.RDMA_PS_TCP()),
        /** Datagram (UD QPs, multicast). */
        UDP(RdmaCm.RDMA_PS_UDP());

        private final int value;

        PortSpace(int value) {
            this.value = value;
        }
    }

    private final CmEventChannel channel;
    private final MemorySegment id;
    private final PortSpace portSpace;
    private VerbsContext context;

    private CmId(CmEventChannel channel, MemorySegment id, PortSpace portSpace) {
        super("CmId", channel);
        this.channel = channel;
        this.id = id.reinterpret(rdma_cm_id.sizeof());
        this.portSpace = portSpace;
    }

    /** Creates an id on {@code channel} in the given port space. */
    public static CmId create(CmEventChannel channel, PortSpace portSpace) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            Native.callInt("rdma_create_id", CREATE, channel.segment(), out, MemorySegment.NULL, portSpace.value);
            return new CmId(channel, out.get(ValueLayout.ADDRESS, 0), portSpace);
        }
    }

    /** Resolves the destination (and binds to a local device); waits for ADDR_RESOLVED. */
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, long timeoutMs) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = source == null ? MemorySegment.NULL : sockaddr(arena, source);
            Native.callInt("rdma_resolve_addr", RESOLVE_ADDR, id, src, sockaddr(arena, destination), (int) timeoutMs);
        }
        expect("rdma_resolve_addr", CmEventType.ADDR_RESOLVED, timeoutMs + 1000);
    }

    /** Resolves the route to the destination; waits for ROUTE_RESOLVED. */
    public void resolveRoute(long timeoutMs) {
        checkOpen();
        Native.callInt("rdma_resolve_route", RESOLVE_ROUTE, id, (int) timeoutMs);
        expect("rdma_resolve_route", CmEventType.ROUTE_RESOLVED, timeoutMs + 1000);
    }

    /**
     * Sets the RC local ACK timeout of this id's QP ({@code RDMA_OPTION_ID_ACK_TIMEOUT}): 4.096 us x 2^{@code exp}.
     * Call it before {@link #connect} or {@link #accept}: it applies when the QP is moved to RTS.
     *
     * @param exp the IB timeout exponent, 1..31
     */
    public void setAckTimeout(int exp) {
        checkOpen();
        if (exp < 1 || exp > 31) {
            throw new IllegalArgumentException("ACK timeout exponent " + exp + " is not in 1..31");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocateFrom(ValueLayout.JAVA_BYTE, (byte) exp);
            Native.callInt("rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)", SET_OPTION, id, RdmaCm.RDMA_OPTION_ID(), RdmaCm.RDMA_OPTION_ID_ACK_TIMEOUT(),
                    value, 1L);
        }
    }

    /** Binds to a local address and port (port 0 = any). */
    public void bind(InetSocketAddress local) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            Native.callInt("rdma_bind_addr", BIND, id, sockaddr(arena, local));
        }
    }

    /** Starts listening (after {@link #bind}). */
    public void listen(int backlog) {
        checkOpen();
        Native.callInt("rdma_listen", LISTEN, id, backlog);
    }

    /**
     * Waits for a connection request on this listening id.
     *
     * @return a new id for the requesting peer (same channel), carrying the request's private data; null on timeout
     */
    public Request awaitConnectRequest(long timeoutMs) {
        checkOpen();
        CmEvent e = channel.next(id.address(), timeoutMs);
        if (e == null) {
            return null;
        }
        if (e.type() != CmEventType.CONNECT_REQUEST) {
            throw new RdmaConnectException("await connect request", e.type(), e.status(), "");
        }
        return new Request(new CmId(channel, MemorySegment.ofAddress(e.idAddress()), portSpace), e.privateData(), e.readAtNs());
    }

    /**
     * An incoming connection request.
     *
     * @param id          the new id for this peer (owned by the caller)
     * @param privateData the peer's private data
     * @param readAtNs    {@link System#nanoTime()} when the request was read from the event channel
     */
    public record Request(CmId id, byte[] privateData, long readAtNs) {
    }

    /**
     * Connects (RC: after {@link #createQueuePair}; waits for ESTABLISHED). For the UDP port space this is a
     * service-ID resolution and returns the remote UD QP; for RC it returns null.
     *
     * @throws RdmaConnectException on REJECTED (e.g. nobody listens), UNREACHABLE, CONNECT_ERROR or timeout
     */
    public UdPeer connect(byte[] privateData, long timeoutMs) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            Native.callInt("rdma_connect", CONNECT, id, connParam(arena, privateData, 0));
        }
        return expect("rdma_connect", CmEventType.ESTABLISHED, timeoutMs).ud();
    }

    /**
     * Connects an RC id (after {@link #createQueuePair}) and waits for ESTABLISHED.
     *
     * @return the private data the peer passed to {@link #accept(byte[], long)} (IB CM pads it: may be longer than sent)
     * @throws RdmaConnectException on REJECTED (e.g. nobody listens), UNREACHABLE, CONNECT_ERROR or timeout
     */
    public byte[] connectForReply(byte[] privateData, long timeoutMs) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            Native.callInt("rdma_connect", CONNECT, id, connParam(arena, privateData, 0));
        }
        byte[] reply = expect("rdma_connect", CmEventType.ESTABLISHED, timeoutMs).privateData();
        return reply == null ? new byte[0] : reply;
    }

    /** Accepts a connection request (RC waits for ESTABLISHED; UD answers with this QP number and Q_Key). */
    public void accept(long timeoutMs) {
        accept(null, timeoutMs);
    }

    /**
     * Accepts a connection request with private data for the connecting side (at most 196 bytes for RC).
     * RC waits for ESTABLISHED; UD answers with this QP number and Q_Key.
     */
    public void accept(byte[] privateData, long timeoutMs) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = connParam(arena, privateData, qpNumOrZero());
            if (portSpace == PortSpace.UDP) {
                rdma_conn_param.qp_num(p, qpNumOrZero());
            }
            Native.callInt("rdma_accept", ACCEPT, id, p);
        }
        if (portSpace == PortSpace.TCP) {
            expect("rdma_accept", CmEventType.ESTABLISHED, timeoutMs);
        }
    }

    /** Rejects a connection request. */
    public void reject(byte[] privateData) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = privateData == null ? MemorySegment.NULL : arena.allocateFrom(ValueLayout.JAVA_BYTE, privateData);
            Native.callInt("rdma_reject", REJECT, id, p, (byte) (privateData == null ? 0 : privateData.length));
        }
    }

    /** Disconnects (the QP moves to error; its outstanding requests are flushed). */
    public void disconnect() {
        checkOpen();
        Native.callInt("rdma_disconnect", DISCONNECT, id);
    }

    /** Waits for the peer's (or our own) DISCONNECTED event. @return true if it arrived in time */
    public boolean awaitDisconnected(long timeoutMs) {
        checkOpen();
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            CmEvent e = left <= 0 ? null : channel.next(id.address(), left);
            if (e == null) {
                return false;
            }
            if (e.type() == CmEventType.DISCONNECTED) {
                return true;
            }
        }
    }

    /** @return true if this id got DISCONNECTED (peer's rdma_disconnect, or ours); reads queued events without waiting */
    public boolean takeDisconnected() {
        checkOpen();
        return channel.takeDisconnected(id.address());
    }

    /** Joins a multicast group (after {@link #resolveAddress} bound the id; create the UD QP first); waits for MULTICAST_JOIN. */
    public UdPeer joinMulticast(InetAddress group, long timeoutMs) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            Native.callInt("rdma_join_multicast", JOIN, id, sockaddr(arena, new InetSocketAddress(group, 0)), MemorySegment.NULL);
        }
        return expect("rdma_join_multicast", CmEventType.MULTICAST_JOIN, timeoutMs).ud();
    }

    /** Leaves a multicast group. */
    public void leaveMulticast(InetAddress group) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            Native.callInt("rdma_leave_multicast", LEAVE, id, sockaddr(arena, new InetSocketAddress(group, 0)));
        }
    }

    /** @return the verbs context rdma_cm bound this id to (after address resolution or a connect request) */
    public synchronized VerbsContext context() {
        checkOpen();
        if (context == null || context.isClosed()) {
            MemorySegment verbs = rdma_cm_id.verbs(id);
            if (verbs.equals(MemorySegment.NULL)) {
                throw new IllegalStateException("CmId is not bound to a device yet: resolve an address or accept a request first");
            }
            context = VerbsContext.borrow(verbs);
        }
        return context;
    }

    /** @return the device port this id uses */
    public int portNumber() {
        return Byte.toUnsignedInt(rdma_cm_id.port_num(id));
    }

    /** Creates the id's QP with {@code rdma_create_qp} (rdma_cm then drives its state on connect/accept/join). */
    public QueuePair createQueuePair(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, QueuePairSpec spec) {
        checkOpen();
        if ((spec.type() == QpType.UD) != (portSpace == PortSpace.UDP)) {
            throw new IllegalArgumentException(spec.type() + " QP does not fit a " + portSpace + " rdma_cm id");
        }
        int granted;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = ProtectionDomain.fillInitAttr(arena, spec, sendCq, recvCq);
            Native.callInt("rdma_create_qp", CREATE_QP, id, pd.segment(), attr);
            granted = ProtectionDomain.grantedInlineBytes(attr); // rdma_create_qp copies the granted caps back
        }
        return new QueuePair(pd, sendCq, recvCq, rdma_cm_id.qp(id), spec, this, granted);
    }

    void destroyQp() {
        RdmaCm.rdma_destroy_qp(id);
    }

    private int qpNumOrZero() {
        MemorySegment qp = rdma_cm_id.qp(id);
        return qp.equals(MemorySegment.NULL) ? 0 : io.rdmabus.rdma.verbs.ffm.ibv_qp.qp_num(qp.reinterpret(
                io.rdmabus.rdma.verbs.ffm.ibv_qp.sizeof()));
    }

    private CmEvent expect(String step, CmEventType wanted, long timeoutMs) {
        CmEvent e = channel.next(id.address(), timeoutMs);
        if (e == null) {
            throw RdmaConnectException.noEventWithin(step, timeoutMs);
        }
        if (e.type() != wanted) {
            throw new RdmaConnectException(step, e.type(), e.status(), "expected " + wanted);
        }
        return e;
    }

    private static MemorySegment connParam(Arena arena, byte[] privateData, int qpNum) {
        MemorySegment p = rdma_conn_param.allocate(arena);
        if (privateData != null && privateData.length > 0) {
            rdma_conn_param.private_data(p, arena.allocateFrom(ValueLayout.JAVA_BYTE, privateData));
            rdma_conn_param.private_data_len(p, (byte) privateData.length);
        }
        // One outstanding RDMA READ each way is enough for the one-sided scenarios.
        rdma_conn_param.responder_resources(p, (byte) 1);
        rdma_conn_param.initiator_depth(p, (byte) 1);
        rdma_conn_param.retry_count(p, (byte) 7);
        rdma_conn_param.rnr_retry_count(p, (byte) 7);
        rdma_conn_param.qp_num(p, qpNum);
        return p;
    }

    private static MemorySegment sockaddr(Arena arena, InetSocketAddress a) {
        if (!(a.getAddress() instanceof Inet4Address v4)) {
            throw new IllegalArgumentException("only IPv4 addresses are supported, got " + a);
        }
        MemorySegment s = arena.allocate(sockaddr_in.layout());
        sockaddr_in.sin_family(s, (short) RdmaCm.AF_INET());
        sockaddr_in.sin_port(s, Short.reverseBytes((short) a.getPort()));
        MemorySegment.copy(v4.getAddress(), 0, s, ValueLayout.JAVA_BYTE, sockaddr_in.sin_addr$offset(), 4);
        return s;
    }

    @Override
    void beforeClose() {
        VerbsContext c;
        synchronized (this) {
            c = context;
        }
        if (c != null) {
            c.close(); // refuses (IllegalStateException) while a PD or CQ on it is still open
        }
    }

    @Override
    void release() {
        Native.callInt("rdma_destroy_id", DESTROY, id);
        // events of this id already read into the channel's pending list would otherwise be handed to the next id that
        // malloc places at the same address (a stale DISCONNECTED or REJECTED failing a new connect at once)
        channel.forget(id.address());
    }
}
