package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_context;
import io.rdmabus.rdma.verbs.ffm.ibv_context_ops;
import io.rdmabus.rdma.verbs.ffm.ibv_device_attr;
import io.rdmabus.rdma.verbs.ffm.ibv_port_attr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * An open verbs device context ({@code struct ibv_context}). Either owned (opened with
 * {@link #open(String)}, closed with {@link #close()}) or borrowed from rdma_cm (the id's
 * {@code verbs} field, which librdmacm owns; closing a borrowed context only marks it closed).
 * Caches the data-path function pointers of {@code ctx->ops} once.
 */
public final class VerbsContext extends NativeResource {
    private static final MethodHandle OPEN = Native.capturing(RdmaCm.ibv_open_device$address(), RdmaCm.ibv_open_device$descriptor());
    private static final MethodHandle GET_LIST =
            Native.capturing(RdmaCm.ibv_get_device_list$address(), RdmaCm.ibv_get_device_list$descriptor());
    private static final MethodHandle QUERY_DEVICE =
            Native.capturing(RdmaCm.ibv_query_device$address(), RdmaCm.ibv_query_device$descriptor());
    private static final MethodHandle QUERY_PORT = Native.capturing(RdmaCm.ibv_query_port$address(), RdmaCm.ibv_query_port$descriptor());
    private static final MethodHandle QUERY_GID = Native.capturing(RdmaCm.ibv_query_gid$address(), RdmaCm.ibv_query_gid$descriptor());
    private static final MethodHandle CLOSE = Native.capturing(RdmaCm.ibv_close_device$address(), RdmaCm.ibv_close_device$descriptor());

    private final MemorySegment ctx;
    private final boolean owned;
    private final String name;
    /** The provider's {@code poll_cq}, {@code post_recv} and {@code post_send}, linked once. */
    final InlineVerbs inlineVerbs;
    final MemorySegment reqNotifyCqFn;

    private VerbsContext(MemorySegment ctx, boolean owned) {
        super("VerbsContext");
        this.ctx = ctx.reinterpret(ibv_context.sizeof());
        this.owned = owned;
        MemorySegment ops = ibv_context.ops(this.ctx);
        this.inlineVerbs = new InlineVerbs(ibv_context_ops.poll_cq(ops), ibv_context_ops.post_recv(ops), ibv_context_ops.post_send(ops));
        this.reqNotifyCqFn = ibv_context_ops.req_notify_cq(ops);
        MemorySegment dev = ibv_context.device(this.ctx);
        this.name = RdmaCm.ibv_get_device_name(dev).reinterpret(256).getString(0);
    }

    /** @return names of the RDMA devices visible to this process (empty when there are none) */
    public static List<String> deviceNames() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment list = Native.callPointer("ibv_get_device_list", GET_LIST, num);
            int n = num.get(ValueLayout.JAVA_INT, 0);
            MemorySegment arr = list.reinterpret((long) (n + 1) * ValueLayout.ADDRESS.byteSize());
            List<String> names = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                names.add(RdmaCm.ibv_get_device_name(arr.getAtIndex(ValueLayout.ADDRESS, i)).reinterpret(256).getString(0));
            }
            RdmaCm.ibv_free_device_list(list);
            return names;
        }
    }

    /**
     * Opens a device by name (e.g. {@code rxe0}).
     *
     * @throws IllegalArgumentException if no such device exists (message lists the devices present)
     */
    public static VerbsContext open(String deviceName) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment list = Native.callPointer("ibv_get_device_list", GET_LIST, num);
            try {
                int n = num.get(ValueLayout.JAVA_INT, 0);
                MemorySegment arr = list.reinterpret((long) (n + 1) * ValueLayout.ADDRESS.byteSize());
                List<String> names = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    MemorySegment dev = arr.getAtIndex(ValueLayout.ADDRESS, i);
                    String devName = RdmaCm.ibv_get_device_name(dev).reinterpret(256).getString(0);
                    if (devName.equals(deviceName)) {
                        return new VerbsContext(Native.callPointer("ibv_open_device", OPEN, dev), true);
                    }
                    names.add(devName);
                }
                throw new IllegalArgumentException("no RDMA device named '" + deviceName + "'; devices present: " + names
                        + (names.isEmpty() ? " (load rdma_rxe and add one: rdma link add rxe0 type rxe netdev eth0)" : ""));
            } finally {
                RdmaCm.ibv_free_device_list(list);
            }
        }
    }

    /** Wraps a context librdmacm owns (an id's {@code verbs}); {@link #close()} does not close the device. */
    static VerbsContext borrow(MemorySegment ctx) {
        return new VerbsContext(ctx, false);
    }

    /** @return the device name, e.g. {@code rxe0} */
    public String deviceName() {
        return name;
    }

    /** Device limits from {@code ibv_query_device}. */
    public DeviceAttributes queryDevice() {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = ibv_device_attr.allocate(arena);
            Native.callInt("ibv_query_device", QUERY_DEVICE, ctx, a);
            return new DeviceAttributes(ibv_device_attr.max_mr_size(a), ibv_device_attr.max_qp(a), ibv_device_attr.max_qp_wr(a),
                    ibv_device_attr.max_sge(a), ibv_device_attr.max_cq(a), ibv_device_attr.max_cqe(a), ibv_device_attr.max_mr(a),
                    ibv_device_attr.max_pd(a), ibv_device_attr.max_qp_rd_atom(a), ibv_device_attr.max_mcast_grp(a),
                    Byte.toUnsignedInt(ibv_device_attr.phys_port_cnt(a)));
        }
    }

    /** Port state and MTU from the exported {@code ibv_query_port} (the header's macro is inline-only). */
    public PortAttributes queryPort(int port) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = ibv_port_attr.allocate(arena); // zeroed: the exported symbol fills the older prefix
            Native.callInt("ibv_query_port", QUERY_PORT, ctx, (byte) port, a);
            return new PortAttributes(ibv_port_attr.state(a), PortAttributes.mtuBytes(ibv_port_attr.max_mtu(a)),
                    PortAttributes.mtuBytes(ibv_port_attr.active_mtu(a)), ibv_port_attr.gid_tbl_len(a),
                    Integer.toUnsignedLong(ibv_port_attr.max_msg_sz(a)), Short.toUnsignedInt(ibv_port_attr.lid(a)),
                    Byte.toUnsignedInt(ibv_port_attr.link_layer(a)));
        }
    }

    /** @return the 16-byte GID at {@code index} of {@code port} */
    public byte[] queryGid(int port, int index) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment gid = arena.allocate(16);
            Native.callInt("ibv_query_gid", QUERY_GID, ctx, (byte) port, index, gid);
            return gid.toArray(ValueLayout.JAVA_BYTE);
        }
    }

    /**
     * Finds a GID in the port's GID table (e.g. the RoCEv2 GID of the interface address, to source datagrams from).
     *
     * @return its index, or -1 if the table does not hold it
     */
    public int findGidIndex(int port, byte[] gid) {
        checkOpen();
        int entries = queryPort(port).gidTableLength();
        for (int i = 0; i < entries; i++) {
            try {
                if (java.util.Arrays.equals(queryGid(port, i), gid)) {
                    return i;
                }
            } catch (VerbsException e) {
                // an unpopulated entry: keep looking
            }
        }
        return -1;
    }

    /** Allocates a protection domain on this context. */
    public ProtectionDomain allocateProtectionDomain() {
        checkOpen();
        return new ProtectionDomain(this);
    }

    /** Creates a completion channel for event-driven completion waiting. */
    public CompletionChannel createCompletionChannel() {
        checkOpen();
        return new CompletionChannel(this);
    }

    /**
     * Creates a completion queue.
     *
     * @param minEntries at least this many completions can be queued
     * @param channel    completion channel for {@link CompletionQueue#requestNotify}, or null for polling only
     */
    public CompletionQueue createCompletionQueue(int minEntries, CompletionChannel channel) {
        checkOpen();
        return new CompletionQueue(this, minEntries, channel);
    }

    MemorySegment segment() {
        checkOpen();
        return ctx;
    }

    @Override
    void release() {
        if (owned) {
            Native.callInt("ibv_close_device", CLOSE, ctx);
        }
    }
}
