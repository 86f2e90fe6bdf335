package io.rdmabus.rdma.verbs.rxe;

import io.rdmabus.rdma.verbs.Access;
import io.rdmabus.rdma.verbs.CompletionChannel;
import io.rdmabus.rdma.verbs.CompletionQueue;
import io.rdmabus.rdma.verbs.DeviceAttributes;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.PortAttributes;
import io.rdmabus.rdma.verbs.ProtectionDomain;
import io.rdmabus.rdma.verbs.QpType;
import io.rdmabus.rdma.verbs.QueuePair;
import io.rdmabus.rdma.verbs.QueuePairSpec;
import io.rdmabus.rdma.verbs.RecvRequest;
import io.rdmabus.rdma.verbs.RecvRequestList;
import io.rdmabus.rdma.verbs.VerbsContext;
import io.rdmabus.rdma.verbs.VerbsException;
import io.rdmabus.rdma.verbs.WorkCompletions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Sanity checks on one rxe device (every guest runs them on its own rxe0). */
@Tag("rxe")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RxeSingleHostTest {

    @Test
    void deviceOpenAndQuery() {
        List<String> names = VerbsContext.deviceNames();
        assertTrue(names.contains(LabEnv.DEVICE), "devices: " + names);
        try (VerbsContext ctx = VerbsContext.open(LabEnv.DEVICE)) {
            assertEquals(LabEnv.DEVICE, ctx.deviceName());
            DeviceAttributes dev = ctx.queryDevice();
            assertTrue(dev.physicalPorts() >= 1, dev.toString());
            assertTrue(dev.maxQpWr() > 0 && dev.maxCqe() > 0 && dev.maxMrSizeBytes() != 0, dev.toString()); // max_mr_size is unsigned (rxe: 2^64-1)
            PortAttributes port = ctx.queryPort(1);
            assertTrue(port.isActive(), "port 1 not active: " + port);
            assertEquals(2, port.linkLayer(), "rxe is RoCE (Ethernet link layer)");
            assertEquals(1024, port.activeMtuBytes(), "rxe on a 1500-byte netdev: active MTU " + port);
            byte[] gid = ctx.queryGid(1, 0);
            assertEquals(16, gid.length);
            assertFalse(java.util.Arrays.equals(gid, new byte[16]), "GID 0 is empty");
            System.out.println("device " + ctx.deviceName() + ": " + dev + " / " + port);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> VerbsContext.open("nosuchdev9"));
        assertTrue(e.getMessage().contains(LabEnv.DEVICE), e.getMessage());
    }

    @Test
    void lifecycleOrderingAndUseAfterClose() {
        VerbsContext ctx = VerbsContext.open(LabEnv.DEVICE);
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        MemoryRegion mr = pd.registerMemory(4096, Access.LOCAL_WRITE);
        CompletionQueue cq = ctx.createCompletionQueue(16, null);
        QueuePair qp = pd.createQueuePair(new QueuePairSpec(QpType.RC, 4, 4, 0), cq, cq);
        assertTrue(qp.qpNumber() > 0);
        assertEquals(QueuePair.STATE_RESET, qp.queryState());

        IllegalStateException refused = assertThrows(IllegalStateException.class, pd::close);
        assertTrue(refused.getMessage().contains("MemoryRegion") && refused.getMessage().contains("QueuePair"), refused.getMessage());
        assertThrows(IllegalStateException.class, cq::close, "CQ used by a QP must refuse to close");
        assertThrows(IllegalStateException.class, ctx::close, "context with a PD must refuse to close");

        qp.close();
        qp.close(); // twice is harmless
        assertThrows(IllegalStateException.class, qp::queryState);
        mr.close();
        assertThrows(IllegalStateException.class, mr::segment);
        pd.close();
        cq.close();
        ctx.close();
        ctx.close();
        assertThrows(IllegalStateException.class, ctx::allocateProtectionDomain);
    }

    @Test
    void failingVerbIsATypedException() {
        try (VerbsContext ctx = VerbsContext.open(LabEnv.DEVICE)) {
            VerbsException e = assertThrows(VerbsException.class, () -> ctx.queryPort(77));
            assertEquals("ibv_query_port", e.verb());
            assertTrue(e.errno() > 0 && e.getMessage().contains("errno"), e.getMessage());
        }
    }

    @Test
    void qpDrivenToErrorFlushesOutstandingReceives() {
        try (VerbsContext ctx = VerbsContext.open(LabEnv.DEVICE)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionChannel channel = ctx.createCompletionChannel();
            CompletionQueue cq = ctx.createCompletionQueue(16, channel);
            QueuePair qp = pd.createQueuePair(new QueuePairSpec(QpType.RC, 4, 8, 0), cq, cq);
            MemoryRegion mr = pd.registerMemory(8 * 256, Access.LOCAL_WRITE);
            try (RecvRequest rr = new RecvRequest(); WorkCompletions wcs = new WorkCompletions(8)) {
                qp.toInitRc(1, 0);
                assertEquals(QueuePair.STATE_INIT, qp.queryState());
                for (int i = 0; i < 4; i++) {
                    assertEquals(0, qp.postRecv(rr.prepare(i, mr, i * 256L, 256)));
                }
                assertEquals(0, cq.requestNotify(false));
                qp.toError();
                assertEquals(QueuePair.STATE_ERROR, qp.queryState());
                // event mode: the flush completions wake the channel
                assertTrue(channel.awaitEvent(10_000, cq) == cq, "no completion event after moving the QP to error");
                int seen = 0;
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (seen < 4 && System.nanoTime() < deadline) {
                    int n = cq.poll(wcs);
                    for (int i = 0; i < n; i++) {
                        assertEquals(WorkCompletions.WR_FLUSH_ERR, wcs.status(i), WorkCompletions.statusText(wcs.status(i)));
                        assertEquals(seen, wcs.wrId(i));
                        seen++;
                    }
                }
                assertEquals(4, seen, "flushed receives");
                // polling found them; the channel is quiet again until re-armed
                assertEquals(0, cq.poll(wcs));
            } finally {
                qp.close();
                mr.close();
                pd.close();
                cq.close();
                channel.close();
            }
        }
    }

    @Test
    void receivePostListsPostInOrderAndBadWrNamesTheFirstRefused() {
        try (VerbsContext ctx = VerbsContext.open(LabEnv.DEVICE)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(256, null);
            QueuePair qp = pd.createQueuePair(new QueuePairSpec(QpType.RC, 4, 8, 64), cq, cq);
            MemoryRegion mr = pd.registerMemory(128 * 64, Access.LOCAL_WRITE);
            try (RecvRequestList list = new RecvRequestList(128); WorkCompletions wcs = new WorkCompletions(64)) {
                assertTrue(qp.maxInlineBytes() >= 64, "rxe grants inline sends: asked 64, granted " + qp.maxInlineBytes());
                qp.toInitRc(1, 0);
                for (int i = 0; i < 6; i++) {
                    list.add(100 + i, mr, i * 64L, 64);
                }
                assertEquals(0, qp.postRecv(list), "a list of 6 within the receive queue");
                list.clear();
                // far more than the receive queue holds: the provider posts what fits and names the first refused
                for (int i = 0; i < 128; i++) {
                    list.add(1000 + i, mr, i * 64L, 64);
                }
                int rc = qp.postRecv(list);
                assertTrue(rc != 0, "128 receives do not fit a queue of 8 (+ the 6 posted)");
                int failedAt = list.failedIndex();
                assertTrue(failedAt >= 0 && failedAt < 128, "bad_wr names a request of the list: " + failedAt);
                assertEquals(1000 + failedAt, list.wrId(failedAt));
                list.dropFirst(failedAt);
                assertEquals(128 - failedAt, list.count(), "the refused ones stay for a later post");
                assertEquals(1000 + failedAt, list.wrId(0));
                qp.toError();
                // exactly the posted ones flush, in post order: the 6, then the list up to bad_wr
                int seen = 0;
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (System.nanoTime() < deadline && seen < 6 + failedAt) {
                    int n = cq.poll(wcs);
                    for (int i = 0; i < n; i++) {
                        assertEquals(WorkCompletions.WR_FLUSH_ERR, wcs.status(i));
                        assertEquals(seen < 6 ? 100 + seen : 1000 + seen - 6, wcs.wrId(i), "flush " + seen);
                        seen++;
                    }
                }
                assertEquals(6 + failedAt, seen, "flushed receives");
                assertEquals(0, cq.poll(wcs), "nothing after bad_wr was posted");
            } finally {
                qp.close();
                mr.close();
                pd.close();
                cq.close();
            }
        }
    }

    @Test
    void loopbackRcOverRdmaCmOnOneDevice() throws Exception {
        String self = LabEnv.selfIp();
        int port = 7480;
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<String> serverSide = pool.submit(() -> {
                try (RcEndpoint ep = RcEndpoint.accept(port, 60_000, false)) {
                    ep.awaitOne(30_000);
                    int c = ep.cursor();
                    assertEquals(WorkCompletions.SUCCESS, ep.wcs.status(c));
                    String got = ep.text((int) (ep.wcs.wrId(c) - RcEndpoint.RECV_WR_BASE), ep.wcs.byteLength(c));
                    ep.sendText(0, "echo " + got, 5);
                    ep.awaitOne(30_000);
                    assertEquals(WorkCompletions.SUCCESS, ep.wcs.status(ep.cursor()));
                    ep.id.awaitDisconnected(30_000);
                    return got;
                }
            });
            try (RcEndpoint ep = RcEndpoint.connect(self, port, 60_000, false)) {
                ep.sendText(0, "hello loopback", 1);
                boolean sendDone = false;
                String echo = null;
                while (!sendDone || echo == null) {
                    ep.awaitOne(30_000);
                    int c = ep.cursor();
                    assertEquals(WorkCompletions.SUCCESS, ep.wcs.status(c), WorkCompletions.statusText(ep.wcs.status(c)));
                    if (ep.wcs.opcode(c) == WorkCompletions.OPCODE_RECV) {
                        echo = ep.text((int) (ep.wcs.wrId(c) - RcEndpoint.RECV_WR_BASE), ep.wcs.byteLength(c));
                    } else {
                        sendDone = true;
                    }
                }
                assertEquals("echo hello loopback", echo);
                ep.id.disconnect();
            }
            assertEquals("hello loopback", serverSide.get(60, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
    }
}
