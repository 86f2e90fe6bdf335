package io.rdmabus.rdma.transport;

import io.rdmabus.TransportException;
import io.rdmabus.rdma.verbs.Access;
import io.rdmabus.rdma.verbs.CmEventChannel;
import io.rdmabus.rdma.verbs.CmId;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.QpType;
import io.rdmabus.rdma.verbs.QueuePair;
import io.rdmabus.rdma.verbs.QueuePairSpec;
import io.rdmabus.rdma.verbs.VerbsException;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static io.rdmabus.rdma.transport.DeviceResources.closeQuietly;

/**
 * Builds a connection's QP and buffers on an rdma_cm id, and disconnects and frees it once the poller has let go of it,
 * with the rxe DREQ deferral: while the port is down the cm id is kept (see {@link #destroy}).
 *
 * <p>Owner: the cm agent thread; {@code close()} calls {@link #destroyNative} and {@link #destroyKeptIds} after the cm
 * agent has stopped.
 */
final class ConnectionLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaTransport.class);

    private final RdmaContext ctx;
    private final RdmaTransportConfig config;
    private final BooleanSupplier pollerRunning;
    /** cm ids of destroyed connections whose DREQ waits for the port to be ACTIVE again. */
    private final List<CmId> idsAwaitingPort = new ArrayList<>();

    ConnectionLifecycle(final RdmaContext ctx, final BooleanSupplier pollerRunning) {
        this.ctx = ctx;
        this.config = ctx.config;
        this.pollerRunning = pollerRunning;
    }

    /** Builds a connection's QP and buffers on {@code id}, registers it and pre-posts every receive buffer. */
    Connection build(final CmId id, final CmEventChannel ownChannel, final String peer) {
        QueuePair qp = null;
        MemoryRegion recvMr = null;
        MemoryRegion ctrlMr = null;
        try {
            if (config.ackTimeoutExp() > 0) {
                id.setAckTimeout(config.ackTimeoutExp()); // applies when librdmacm moves the QP to RTS
            }
            int sendWr = config.dataCredits() + RdmaTransportConfig.CONTROL_SLOTS + Connection.SIGNAL_INTERVAL + 8;
            int inline = Connection.INLINE_BYTES;
            DeviceResources d = ctx.device;
            try {
                qp = id.createQueuePair(d.pd, d.cq, d.cq, new QueuePairSpec(QpType.RC, sendWr, config.recvBuffers(), inline));
            } catch (VerbsException e) {
                inline = 0; // a device without inline sends: every send reads its registered buffer
                qp = id.createQueuePair(d.pd, d.cq, d.cq, new QueuePairSpec(QpType.RC, sendWr, config.recvBuffers(), 0));
            }
            recvMr = d.pd.registerMemory((long) config.slotBytes() * config.recvBuffers(), Access.LOCAL_WRITE);
            ctrlMr = d.pd.registerMemory((long) Wire.CONTROL_BYTES * RdmaTransportConfig.CONTROL_SLOTS, Access.NONE);
            int connId = ctx.connections.nextId();
            // what the device granted (at least what we asked for): sends up to it go inline
            Connection c = new Connection(connId, peer, id, ownChannel, qp, recvMr, ctrlMr, config.slotBytes(), config.recvBuffers(),
                    sendWr, inline == 0 ? 0 : qp.maxInlineBytes());
            for (int s = 0; s < config.recvBuffers(); s++) {
                long wrId = WorkRequestId.of(connId, WorkRequestId.KIND_RECV, 0, s);
                int rc = qp.postRecv(c.recvRequest.prepare(wrId, recvMr, (long) s * c.slotBytes, c.slotBytes));
                if (rc != 0) {
                    throw new VerbsException("ibv_post_recv", rc);
                }
            }
            if (!ctx.connections.register(c)) {
                destroyNative(c);
                throw new TransportException("Too many rdma connections (" + ConnectionTable.SIZE + ")");
            }
            return c;
        } catch (RuntimeException e) {
            closeQuietly(qp);
            closeQuietly(recvMr);
            closeQuietly(ctrlMr);
            throw e;
        }
    }

    void destroyNative(final Connection c) {
        destroyNative(c, true);
    }

    private void destroyNative(final Connection c, final boolean withCmId) {
        c.destroyed = true;
        synchronized (c.postLock) {
            // a publisher that entered its post before closed was set may still be in it (destroy waits for posters only
            // 1 s, and a thread can stall longer under load): every post checks closed under this lock, so none follows
            closeQuietly(c.qp);
        }
        c.recvRequest.close();
        c.reposts.close();
        c.ctrlRequest.close();
        closeQuietly(c.recvMr);
        closeQuietly(c.ctrlMr);
        if (withCmId) {
            closeQuietly(c.cmId);
        }
        closeQuietly(c.ownChannel);
        ctx.connections.unregister(c);
    }

    /** Disconnects and frees a connection the poller has let go of. */
    void destroy(final Connection c) {
        if (c.destroyed) {
            return;
        }
        c.closed = true;
        // rxe (guest kernel 6.1): a DREQ (of rdma_disconnect, or of rdma_destroy_id on a connected id) sent while the port
        // was down left the host unable to complete any rdma_cm handshake after the link came back: the device counted no
        // received packet, every REP was lost (RdmaLinkFlapRxeTest, docs/rdma-transport.md). So while the port is down the
        // QP only goes to error here, and the cm id (whose destruction sends the DREQ) is kept until the port is ACTIVE.
        boolean portUp = ctx.transportClosed() || ctx.device.portActive();
        try {
            if (portUp) {
                c.cmId.disconnect(); // QP to error: posted work flushes, so send slots get their completions back
            } else {
                c.qp.toError();
            }
        } catch (RuntimeException ignored) {
            // already disconnected by the peer or never established
        }
        awaitSendsDrained(c);
        c.releaseAll(ctx.publications.pools());
        if (portUp) {
            destroyNative(c);
        } else {
            ctx.counters.increment(RdmaCounter.DISCONNECTS_DEFERRED);
            LOG.info("rdma transport of bus '{}': port {}/{} is down; {} keeps its cm id (and so its DREQ) until the port is ACTIVE again",
                    ctx.busName, ctx.device.deviceName, ctx.device.devicePort, c);
            idsAwaitingPort.add(c.cmId);
            destroyNative(c, false);
        }
    }

    /**
     * Waits for posters to leave and for the flush completions; sends that completed unsignalled produce none, so stops
     * once the count stops moving for 20 ms (1 s at most).
     */
    private void awaitSendsDrained(final Connection c) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        long lastChangeNs = System.nanoTime();
        int last = c.outstandingSends.get();
        while ((c.posters.get() > 0 || (c.outstandingSends.get() > 0 && pollerRunning.getAsBoolean())) && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            int now = c.outstandingSends.get();
            if (now != last) {
                last = now;
                lastChangeNs = System.nanoTime();
            } else if (c.posters.get() == 0 && System.nanoTime() - lastChangeNs > TimeUnit.MILLISECONDS.toNanos(20)) {
                break;
            }
        }
    }

    /** Destroys the cm ids kept while the port was down, once it is ACTIVE again (or the transport closes). */
    int destroyIdsAwaitingPort() {
        if (idsAwaitingPort.isEmpty() || !ctx.transportClosed() && !ctx.device.portActive()) {
            return 0;
        }
        return destroyIdsKeptForPort();
    }

    /** Destroys the kept cm ids now (the caller knows the port is ACTIVE, or the transport closes). */
    int destroyIdsKeptForPort() {
        if (idsAwaitingPort.isEmpty()) {
            return 0;
        }
        int n = idsAwaitingPort.size();
        long startNs = System.nanoTime();
        ctx.cmProgress.step("destroying the cm ids kept while the port was down", "");
        for (CmId id : idsAwaitingPort) {
            closeQuietly(id);
        }
        ctx.cmProgress.done();
        idsAwaitingPort.clear();
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
        // rdma_destroy_id of a connected id sends its DREQ and can wait for the CM in the kernel; this thread also dials:
        // say so when that takes long (it delays every dial behind it)
        if (tookMs >= 1000) {
            LOG.warn("rdma transport of bus '{}': destroying {} cm id(s) kept while the port was down took {} ms (no dial or accept "
                    + "meanwhile)", ctx.busName, n, tookMs);
        } else {
            LOG.info("rdma transport of bus '{}': destroyed {} cm id(s) kept while port {}/{} was down ({} ms{})", ctx.busName, n,
                    ctx.device.deviceName, ctx.device.devicePort, tookMs, ctx.transportClosed() ? ", transport closing" : ", the port is ACTIVE again");
        }
        return n;
    }

    /** close(), after the cm agent has stopped: its kept ids go now, port up or not. */
    void destroyKeptIds() {
        for (CmId id : idsAwaitingPort) {
            closeQuietly(id);
        }
        idsAwaitingPort.clear();
    }
}
