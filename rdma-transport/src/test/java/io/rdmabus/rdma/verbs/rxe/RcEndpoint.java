package io.rdmabus.rdma.verbs.rxe;

import io.rdmabus.rdma.verbs.Access;
import io.rdmabus.rdma.verbs.CmEventChannel;
import io.rdmabus.rdma.verbs.CmEventType;
import io.rdmabus.rdma.verbs.CmId;
import io.rdmabus.rdma.verbs.CompletionChannel;
import io.rdmabus.rdma.verbs.CompletionQueue;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.ProtectionDomain;
import io.rdmabus.rdma.verbs.QpType;
import io.rdmabus.rdma.verbs.QueuePair;
import io.rdmabus.rdma.verbs.QueuePairSpec;
import io.rdmabus.rdma.verbs.RdmaConnectException;
import io.rdmabus.rdma.verbs.RecvRequest;
import io.rdmabus.rdma.verbs.SendRequest;
import io.rdmabus.rdma.verbs.WorkCompletions;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.locks.LockSupport;

/**
 * Test helper: one RC connection over rdma_cm with a send and a receive buffer of {@link #SLOTS}
 * slots each, receives pre-posted, and completion waiting by polling or by completion channel.
 */
final class RcEndpoint implements AutoCloseable {
    static final int SLOTS = 16;
    static final int SLOT_BYTES = 4096;
    static final long RECV_WR_BASE = 1000;

    final CmEventChannel channel;
    final CmId listener;
    final CmId id;
    final ProtectionDomain pd;
    final CompletionChannel completionChannel;
    final CompletionQueue cq;
    final QueuePair qp;
    final MemoryRegion sendMr;
    final MemoryRegion recvMr;
    final SendRequest send = new SendRequest();
    final RecvRequest recv = new RecvRequest();
    final WorkCompletions wcs = new WorkCompletions(16);
    final boolean eventMode;
    private int cursor;

    private RcEndpoint(CmEventChannel channel, CmId listener, CmId id, boolean eventMode) {
        this.channel = channel;
        this.listener = listener;
        this.id = id;
        this.eventMode = eventMode;
        this.pd = id.context().allocateProtectionDomain();
        this.completionChannel = eventMode ? id.context().createCompletionChannel() : null;
        this.cq = id.context().createCompletionQueue(64, completionChannel);
        this.qp = id.createQueuePair(pd, cq, cq, new QueuePairSpec(QpType.RC, 32, SLOTS, 0));
        this.sendMr = pd.registerMemory((long) SLOTS * SLOT_BYTES, Access.NONE);
        this.recvMr = pd.registerMemory((long) SLOTS * SLOT_BYTES, Access.LOCAL_WRITE);
        for (int i = 0; i < SLOTS; i++) {
            repost(i);
        }
        if (eventMode) {
            check(cq.requestNotify(false), "req_notify_cq");
        }
    }

    /** Passive side: listens on {@code port}, accepts one connection. */
    static RcEndpoint accept(int port, long timeoutMs, boolean eventMode) throws Exception {
        CmEventChannel ch = new CmEventChannel();
        CmId listener = CmId.create(ch, CmId.PortSpace.TCP);
        listener.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), port));
        listener.listen(4);
        CmId.Request req = listener.awaitConnectRequest(timeoutMs);
        if (req == null) {
            throw new AssertionError("no connection request on port " + port + " within " + timeoutMs + " ms");
        }
        RcEndpoint ep = new RcEndpoint(ch, listener, req.id(), eventMode);
        req.id().accept(timeoutMs);
        return ep;
    }

    /** Active side: connects, retrying while the passive side is not listening yet (REJECTED), for at most {@code timeoutMs}. */
    static RcEndpoint connect(String host, int port, long timeoutMs, boolean eventMode) throws Exception {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (true) {
            CmEventChannel ch = new CmEventChannel();
            CmId id = CmId.create(ch, CmId.PortSpace.TCP);
            RcEndpoint ep = null;
            try {
                id.resolveAddress(null, new InetSocketAddress(InetAddress.getByName(host), port), 5000);
                id.resolveRoute(5000);
                ep = new RcEndpoint(ch, null, id, eventMode);
                id.connect(null, 10_000);
                return ep;
            } catch (RdmaConnectException e) {
                if (ep != null) {
                    ep.close();
                } else {
                    id.close();
                    ch.close();
                }
                boolean retryable = e.eventType() == CmEventType.REJECTED || e.eventType() == CmEventType.UNREACHABLE;
                if (!retryable || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(300);
            }
        }
    }

    /** Sends {@code text} from send slot {@code slot}, signaled. */
    void sendText(int slot, String text, long wrId) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        java.lang.foreign.MemorySegment.copy(b, 0, sendMr.segment(), java.lang.foreign.ValueLayout.JAVA_BYTE,
                (long) slot * SLOT_BYTES, b.length);
        send.prepareSend(wrId, sendMr, (long) slot * SLOT_BYTES, b.length, true);
        check(qp.postSend(send), "post_send");
    }

    /** Re-posts receive slot {@code slot}. */
    void repost(int slot) {
        recv.prepare(RECV_WR_BASE + slot, recvMr, (long) slot * SLOT_BYTES, SLOT_BYTES);
        check(qp.postRecv(recv), "post_recv");
    }

    /** Reads the text a receive completion delivered into {@code slot}. */
    String text(int slot, int length) {
        byte[] b = recvMr.segment().asSlice((long) slot * SLOT_BYTES, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        return new String(b, StandardCharsets.UTF_8);
    }

    /**
     * Waits for exactly one more completion (polling, or sleeping on the completion channel in event mode).
     * The completion is at index {@link #cursor()} of {@link #wcs}.
     */
    void awaitOne(long timeoutMs) {
        cursor++;
        if (cursor < wcs.count()) {
            return;
        }
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (true) {
            int n = cq.poll(wcs);
            if (n < 0) {
                throw new AssertionError("poll_cq failed: " + n);
            }
            if (n > 0) {
                cursor = 0;
                return;
            }
            long leftMs = (deadline - System.nanoTime()) / 1_000_000L;
            if (leftMs <= 0) {
                throw new AssertionError("no completion within " + timeoutMs + " ms");
            }
            if (eventMode) {
                if (completionChannel.awaitEvent(leftMs, cq) != null) {
                    check(cq.requestNotify(false), "req_notify_cq");
                }
            } else {
                LockSupport.parkNanos(20_000);
            }
        }
    }

    int cursor() {
        return cursor;
    }

    static void check(int rc, String what) {
        if (rc != 0) {
            throw new AssertionError(what + " returned errno " + rc);
        }
    }

    @Override
    public void close() {
        send.close();
        recv.close();
        wcs.close();
        qp.close();
        sendMr.close();
        recvMr.close();
        pd.close();
        cq.close();
        if (completionChannel != null) {
            completionChannel.close();
        }
        id.close();
        if (listener != null) {
            listener.close();
        }
        channel.close();
    }
}
