package io.rdmabus.rdma.verbs.rxe;

import io.rdmabus.rdma.verbs.Access;
import io.rdmabus.rdma.verbs.AddressHandle;
import io.rdmabus.rdma.verbs.CmEventChannel;
import io.rdmabus.rdma.verbs.CmEventType;
import io.rdmabus.rdma.verbs.CmId;
import io.rdmabus.rdma.verbs.CompletionQueue;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.ProtectionDomain;
import io.rdmabus.rdma.verbs.QpType;
import io.rdmabus.rdma.verbs.QueuePair;
import io.rdmabus.rdma.verbs.QueuePairSpec;
import io.rdmabus.rdma.verbs.RdmaConnectException;
import io.rdmabus.rdma.verbs.RecvRequest;
import io.rdmabus.rdma.verbs.SendRequest;
import io.rdmabus.rdma.verbs.UdPeer;
import io.rdmabus.rdma.verbs.WorkCompletions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Seed scenarios across two rxe guests: guest 1 is the passive side, guest 2 the active side.
 * Both guests run the methods in the same order, each scenario on its own rdma_cm port.
 */
@Tag("rxe")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RxeTwoHostTest {
    private static final long WAIT_MS = 90_000;
    private static final int PING_PONGS = 100;
    private static boolean server;
    private static String serverIp;

    @BeforeAll
    static void roles() {
        LabEnv.requireGuests(2);
        int index = LabEnv.guestIndex();
        if (index > 2) {
            throw new AssertionError("RxeTwoHostTest runs on guests 1 and 2 only; select it with --guests 2");
        }
        server = index == 1;
        serverIp = LabEnv.guestIps().get(0);
    }

    @Test
    @Order(1)
    void rcPingPongOverRdmaCm() throws Exception {
        pingPong(7471, false, PING_PONGS, PING_PONGS);
    }

    @Test
    @Order(2)
    void oneSidedWriteAndReadThenDone() throws Exception {
        int port = 7472;
        int bytes = 8192;
        if (server) {
            try (RcEndpoint ep = RcEndpoint.accept(port, WAIT_MS, false);
                 MemoryRegion target = ep.pd.registerMemory(bytes, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ)) {
                MemorySegment t = target.segment();
                for (int i = 0; i < bytes / 2; i++) {
                    t.set(ValueLayout.JAVA_BYTE, bytes / 2 + i, (byte) (i * 7 + 3)); // second half: what the peer will READ
                }
                ep.sendText(0, target.address() + ":" + target.rkey() + ":" + bytes, 1);
                ep.awaitOne(WAIT_MS);
                assertEquals(WorkCompletions.SUCCESS, ep.wcs.status(ep.cursor()), "send of MR info");
                ep.awaitOne(WAIT_MS);
                int c = ep.cursor();
                assertEquals(WorkCompletions.SUCCESS, ep.wcs.status(c));
                int slot = (int) (ep.wcs.wrId(c) - RcEndpoint.RECV_WR_BASE);
                assertEquals("DONE", ep.text(slot, ep.wcs.byteLength(c)));
                for (int i = 0; i < bytes / 2; i++) {
                    assertEquals((byte) (i * 13 + 1), t.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " written by the peer");
                }
                ep.id.awaitDisconnected(WAIT_MS);
            }
        } else {
            try (RcEndpoint ep = RcEndpoint.connect(serverIp, port, WAIT_MS, false);
                 MemoryRegion local = ep.pd.registerMemory(bytes, Access.LOCAL_WRITE)) {
                ep.awaitOne(WAIT_MS);
                int c = ep.cursor();
                assertEquals(WorkCompletions.SUCCESS, ep.wcs.status(c));
                String[] info = ep.text((int) (ep.wcs.wrId(c) - RcEndpoint.RECV_WR_BASE), ep.wcs.byteLength(c)).split(":");
                long remote = Long.parseLong(info[0]);
                int rkey = Integer.parseInt(info[1]);
                assertEquals(bytes, Integer.parseInt(info[2]));
                MemorySegment l = local.segment();
                for (int i = 0; i < bytes / 2; i++) {
                    l.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + 1));
                }
                ep.send.prepareRdmaWrite(11, local, 0, bytes / 2, remote, rkey, true);
                RcEndpoint.check(ep.qp.postSend(ep.send), "post RDMA WRITE");
                ep.awaitOne(WAIT_MS);
                assertEquals(WorkCompletions.SUCCESS, ep.wcs.status(ep.cursor()), "RDMA WRITE completion");
                assertEquals(11, ep.wcs.wrId(ep.cursor()));
                ep.send.prepareRdmaRead(12, local, bytes / 2, bytes / 2, remote + bytes / 2, rkey, true);
                RcEndpoint.check(ep.qp.postSend(ep.send), "post RDMA READ");
                ep.awaitOne(WAIT_MS);
                assertEquals(WorkCompletions.SUCCESS, ep.wcs.status(ep.cursor()), "RDMA READ completion");
                for (int i = 0; i < bytes / 2; i++) {
                    assertEquals((byte) (i * 7 + 3), l.get(ValueLayout.JAVA_BYTE, bytes / 2 + i), "byte " + i + " read from the peer");
                }
                ep.sendText(0, "DONE", 13);
                ep.awaitOne(WAIT_MS);
                assertEquals(WorkCompletions.SUCCESS, ep.wcs.status(ep.cursor()), "DONE send");
                ep.id.disconnect();
                ep.id.awaitDisconnected(10_000);
            }
        }
    }

    @Test
    @Order(3)
    void udDatagramsWithQkeyAndMtuLimit() throws Exception {
        int port = 7473;
        int count = 50;
        int grh = 40;
        if (server) {
            receiveUdDatagrams(port, count, grh);
        } else {
            sendUdDatagrams(port, count);
        }
    }

    /** Server side of {@link #udDatagramsWithQkeyAndMtuLimit}: accepts the SIDR request and receives the datagrams. */
    private void receiveUdDatagrams(final int port, final int count, final int grh) throws Exception {
        try (CmEventChannel ch = new CmEventChannel(); CmId listener = CmId.create(ch, CmId.PortSpace.UDP)) {
            listener.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), port));
            listener.listen(4);
            CmId.Request req = listener.awaitConnectRequest(WAIT_MS);
            assertTrue(req != null, "no UD (SIDR) request within " + WAIT_MS + " ms");
            CmId id = req.id();
            ProtectionDomain pd = id.context().allocateProtectionDomain();
            CompletionQueue cq = id.context().createCompletionQueue(128, null);
            QueuePair qp = id.createQueuePair(pd, cq, cq, new QueuePairSpec(QpType.UD, 16, 64, 0));
            MemoryRegion buf = pd.registerMemory(64L * 2048, Access.LOCAL_WRITE);
            try (RecvRequest rr = new RecvRequest(); WorkCompletions wcs = new WorkCompletions(16)) {
                for (int i = 0; i < 64; i++) {
                    RcEndpoint.check(qp.postRecv(rr.prepare(i, buf, i * 2048L, 2048)), "post_recv");
                }
                id.accept(WAIT_MS);
                Set<String> got = new HashSet<>();
                long deadline = System.nanoTime() + WAIT_MS * 1_000_000L;
                while (got.size() < count && System.nanoTime() < deadline) {
                    int n = cq.poll(wcs);
                    for (int i = 0; i < n; i++) {
                        assertEquals(WorkCompletions.SUCCESS, wcs.status(i), WorkCompletions.statusText(wcs.status(i)));
                        int slot = (int) wcs.wrId(i);
                        int len = wcs.byteLength(i) - grh;
                        byte[] b = buf.segment().asSlice(slot * 2048L + grh, len).toArray(ValueLayout.JAVA_BYTE);
                        got.add(new String(b, StandardCharsets.UTF_8));
                        RcEndpoint.check(qp.postRecv(rr.prepare(slot, buf, slot * 2048L, 2048)), "post_recv");
                    }
                    if (n == 0) {
                        Thread.sleep(1);
                    }
                }
                for (int i = 0; i < count; i++) {
                    assertTrue(got.contains("datagram " + i), "missing datagram " + i + ", got " + got.size());
                }
            } finally {
                qp.close();
                buf.close();
                pd.close();
                cq.close();
                id.close();
            }
        }
    }

    /** Client side of {@link #udDatagramsWithQkeyAndMtuLimit}: resolves the server over SIDR and sends the datagrams. */
    private void sendUdDatagrams(final int port, final int count) throws Exception {
        long deadline = System.nanoTime() + WAIT_MS * 1_000_000L;
        while (true) {
            try (CmEventChannel ch = new CmEventChannel()) {
                CmId id = CmId.create(ch, CmId.PortSpace.UDP);
                try {
                    id.resolveAddress(null, new InetSocketAddress(InetAddress.getByName(serverIp), port), 5000);
                    id.resolveRoute(5000);
                    ProtectionDomain pd = id.context().allocateProtectionDomain();
                    CompletionQueue cq = id.context().createCompletionQueue(64, null);
                    QueuePair qp = id.createQueuePair(pd, cq, cq, new QueuePairSpec(QpType.UD, 16, 4, 0));
                    MemoryRegion buf = pd.registerMemory(8192, Access.NONE);
                    try (SendRequest sr = new SendRequest(); WorkCompletions wcs = new WorkCompletions(16)) {
                        UdPeer peer;
                        try {
                            peer = id.connect(null, 10_000);
                        } catch (RdmaConnectException e) {
                            if (e.eventType() != CmEventType.UNREACHABLE && e.eventType() != CmEventType.REJECTED
                                    || System.nanoTime() > deadline) {
                                throw e;
                            }
                            Thread.sleep(300);
                            continue;
                        }
                        assertTrue(peer != null, "SIDR resolution returned no UD parameters");
                        assertEquals(0x01234567, peer.qkey(), "rdma_cm UD Q_Key (RDMA_UDP_QKEY)");
                        try (AddressHandle ah = peer.createAddressHandle(pd)) {
                            int mtu = qp.maxUdPayloadBytes();
                            assertTrue(mtu >= 256 && mtu <= 4096, "path MTU " + mtu);
                            IllegalArgumentException tooBig = assertThrows(IllegalArgumentException.class,
                                    () -> qp.postSend(sr.prepareSend(99, buf, 0, mtu + 1, true).toUd(ah, peer.remoteQpn(), peer.qkey())));
                            assertTrue(tooBig.getMessage().contains("exceeds the path MTU"), tooBig.getMessage());
                            for (int i = 0; i < count; i++) {
                                byte[] b = ("datagram " + i).getBytes(StandardCharsets.UTF_8);
                                MemorySegment.copy(b, 0, buf.segment(), ValueLayout.JAVA_BYTE, 0, b.length);
                                RcEndpoint.check(qp.postSend(sr.prepareSend(i, buf, 0, b.length, true)
                                        .toUd(ah, peer.remoteQpn(), peer.qkey())), "post_send UD");
                                awaitSend(cq, wcs, i);
                                Thread.sleep(5);
                            }
                        }
                    } finally {
                        qp.close();
                        buf.close();
                        pd.close();
                        cq.close();
                    }
                    return;
                } finally {
                    id.close();
                }
            }
        }
    }

    private static void awaitSend(CompletionQueue cq, WorkCompletions wcs, long wrId) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            int n = cq.poll(wcs);
            if (n > 0) {
                assertEquals(WorkCompletions.SUCCESS, wcs.status(0), WorkCompletions.statusText(wcs.status(0)));
                assertEquals(wrId, wcs.wrId(0));
                return;
            }
            Thread.sleep(0, 50_000);
        }
        throw new AssertionError("no send completion for wr " + wrId);
    }

    @Test
    @Order(4)
    void connectingToAPortNobodyListensOnIsATypedError() throws Exception {
        if (server) {
            return; // nothing listens on 7474: that is the scenario
        }
        try (CmEventChannel ch = new CmEventChannel()) {
            CmId id = CmId.create(ch, CmId.PortSpace.TCP);
            try {
                id.resolveAddress(null, new InetSocketAddress(InetAddress.getByName(serverIp), 7474), 5000);
                id.resolveRoute(5000);
                ProtectionDomain pd = id.context().allocateProtectionDomain();
                CompletionQueue cq = id.context().createCompletionQueue(8, null);
                QueuePair qp = id.createQueuePair(pd, cq, cq, new QueuePairSpec(QpType.RC, 4, 4, 0));
                try {
                    RdmaConnectException e = assertThrows(RdmaConnectException.class, () -> id.connect(null, 20_000));
                    assertTrue(e.eventType() == CmEventType.REJECTED || e.eventType() == CmEventType.UNREACHABLE,
                            "expected REJECTED or UNREACHABLE, got " + e.eventType() + ": " + e.getMessage());
                    assertEquals("rdma_connect", e.verb());
                } finally {
                    qp.close();
                    pd.close();
                    cq.close();
                }
            } finally {
                id.close();
            }
        }
    }

    @Test
    @Order(5)
    void wrongRkeyGivesRemoteAccessErrorCompletion() throws Exception {
        int port = 7475;
        if (server) {
            try (RcEndpoint ep = RcEndpoint.accept(port, WAIT_MS, false);
                 MemoryRegion target = ep.pd.registerMemory(4096, Access.LOCAL_WRITE | Access.REMOTE_WRITE)) {
                ep.sendText(0, target.address() + ":" + target.rkey(), 1);
                ep.awaitOne(WAIT_MS);
                assertEquals(WorkCompletions.SUCCESS, ep.wcs.status(ep.cursor()));
                assertTrue(ep.id.awaitDisconnected(WAIT_MS), "peer did not disconnect");
                assertTrue(target.segment().asSlice(0, 64).mismatch(MemorySegment.ofArray(new byte[64])) < 0,
                        "a write with a wrong rkey must not land");
            }
        } else {
            try (RcEndpoint ep = RcEndpoint.connect(serverIp, port, WAIT_MS, false);
                 MemoryRegion local = ep.pd.registerMemory(4096, Access.NONE)) {
                ep.awaitOne(WAIT_MS);
                int c = ep.cursor();
                String[] info = ep.text((int) (ep.wcs.wrId(c) - RcEndpoint.RECV_WR_BASE), ep.wcs.byteLength(c)).split(":");
                local.segment().fill((byte) 0x5a);
                int wrongRkey = Integer.parseInt(info[1]) ^ 0x00ff_ff00;
                ep.send.prepareRdmaWrite(21, local, 0, 64, Long.parseLong(info[0]), wrongRkey, true);
                RcEndpoint.check(ep.qp.postSend(ep.send), "post RDMA WRITE");
                ep.awaitOne(WAIT_MS);
                assertEquals(WorkCompletions.REM_ACCESS_ERR, ep.wcs.status(ep.cursor()),
                        "got " + WorkCompletions.statusText(ep.wcs.status(ep.cursor())));
                assertEquals(21, ep.wcs.wrId(ep.cursor()));
                ep.id.disconnect();
            }
        }
    }

    @Test
    @Order(6)
    void rcPingPongEventDriven() throws Exception {
        pingPong(7476, true, 30, 30);
    }

    /** {@code warmupRounds} untimed round trips (JIT warm-up under TCG), then {@code timedRounds} timed ones. */
    private static void pingPong(int port, boolean eventMode, int warmupRounds, int timedRounds) throws Exception {
        int rounds = warmupRounds + timedRounds;
        int[] sendsDone = {0};
        if (server) {
            try (RcEndpoint ep = RcEndpoint.accept(port, WAIT_MS, eventMode)) {
                for (int i = 0; i < rounds; i++) {
                    int c = awaitRecv(ep, sendsDone);
                    int slot = (int) (ep.wcs.wrId(c) - RcEndpoint.RECV_WR_BASE);
                    assertEquals("ping " + i, ep.text(slot, ep.wcs.byteLength(c)));
                    ep.repost(slot);
                    ep.sendText(i % RcEndpoint.SLOTS, "pong " + i, i);
                }
                awaitSends(ep, sendsDone, rounds);
                assertTrue(ep.id.awaitDisconnected(WAIT_MS), "client did not disconnect");
            }
        } else {
            try (RcEndpoint ep = RcEndpoint.connect(serverIp, port, WAIT_MS, eventMode)) {
                long t0 = System.nanoTime();
                for (int i = 0; i < rounds; i++) {
                    if (i == warmupRounds) {
                        t0 = System.nanoTime();
                    }
                    ep.sendText(i % RcEndpoint.SLOTS, "ping " + i, i);
                    int c = awaitRecv(ep, sendsDone);
                    int slot = (int) (ep.wcs.wrId(c) - RcEndpoint.RECV_WR_BASE);
                    assertEquals("pong " + i, ep.text(slot, ep.wcs.byteLength(c)));
                    ep.repost(slot);
                }
                long us = (System.nanoTime() - t0) / 1000 / timedRounds;
                System.out.println("rc ping-pong " + (eventMode ? "event-driven" : "polling") + ": " + timedRounds
                        + " timed round trips after " + warmupRounds + " warm-up, mean " + us + " us");
                awaitSends(ep, sendsDone, rounds);
                ep.id.disconnect();
                // disconnect moves the QP to error: every receive still posted completes as flushed
                for (int i = 0; i < RcEndpoint.SLOTS; i++) {
                    ep.awaitOne(WAIT_MS);
                    int c = ep.cursor();
                    assertEquals(WorkCompletions.WR_FLUSH_ERR, ep.wcs.status(c), WorkCompletions.statusText(ep.wcs.status(c)));
                }
            }
        }
    }

    /** Waits for the next receive completion; send completions seen on the way are counted in {@code sendsDone[0]}. */
    private static int awaitRecv(RcEndpoint ep, int[] sendsDone) {
        while (true) {
            ep.awaitOne(WAIT_MS);
            int c = ep.cursor();
            assertEquals(WorkCompletions.SUCCESS, ep.wcs.status(c), WorkCompletions.statusText(ep.wcs.status(c)));
            if (ep.wcs.opcode(c) == WorkCompletions.OPCODE_RECV) {
                return c;
            }
            sendsDone[0]++;
        }
    }

    private static void awaitSends(RcEndpoint ep, int[] sendsDone, int posted) {
        while (sendsDone[0] < posted) {
            ep.awaitOne(WAIT_MS);
            int c = ep.cursor();
            assertEquals(WorkCompletions.SUCCESS, ep.wcs.status(c), WorkCompletions.statusText(ep.wcs.status(c)));
            assertTrue(ep.wcs.opcode(c) != WorkCompletions.OPCODE_RECV, "unexpected receive after the last round");
            sendsDone[0]++;
        }
    }
}
