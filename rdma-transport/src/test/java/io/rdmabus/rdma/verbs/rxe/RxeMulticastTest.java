package io.rdmabus.rdma.verbs.rxe;

import io.rdmabus.rdma.verbs.Access;
import io.rdmabus.rdma.verbs.AddressHandle;
import io.rdmabus.rdma.verbs.CmEventChannel;
import io.rdmabus.rdma.verbs.CmId;
import io.rdmabus.rdma.verbs.CompletionQueue;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.ProtectionDomain;
import io.rdmabus.rdma.verbs.QpType;
import io.rdmabus.rdma.verbs.QueuePair;
import io.rdmabus.rdma.verbs.QueuePairSpec;
import io.rdmabus.rdma.verbs.RecvRequest;
import io.rdmabus.rdma.verbs.SendRequest;
import io.rdmabus.rdma.verbs.UdPeer;
import io.rdmabus.rdma.verbs.WorkCompletions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * UD multicast across three rxe guests: guests 1 and 3 join the group and must receive what guest 2
 * (which joins to get the group's address handle) sends. The guests coordinate through files in
 * {@code LAB_SHARED}: each subscriber says when it has joined (the sender starts only then: JVM start-up in a
 * TCG guest takes tens of seconds and varies) and when it has what it wanted (the sender stops only then).
 */
@Tag("rxe")
@Timeout(value = 400, unit = TimeUnit.SECONDS)
class RxeMulticastTest {
    private static final String GROUP = "239.77.0.1";
    private static final int GRH_BYTES = 40;
    private static final int SLOT = 2048;
    private static final int RECVS = 64;
    private static final int WANTED = 10;
    private static final long READY_WAIT_MS = 180_000;
    private static final long SEND_LIMIT_MS = 120_000;
    private static final int[] SUBSCRIBERS = {1, 3};

    @Test
    void twoSubscribersReceiveWhatAThirdPartySends() throws Exception {
        LabEnv.requireGuests(3);
        boolean sender = LabEnv.guestIndex() == 2;
        InetAddress group = InetAddress.getByName(GROUP);
        try (CmEventChannel ch = new CmEventChannel()) {
            CmId id = CmId.create(ch, CmId.PortSpace.UDP);
            try {
                id.resolveAddress(new InetSocketAddress(InetAddress.getByName(LabEnv.selfIp()), 0), new InetSocketAddress(group, 0), 5000);
                ProtectionDomain pd = id.context().allocateProtectionDomain();
                CompletionQueue cq = id.context().createCompletionQueue(128, null);
                QueuePair qp = id.createQueuePair(pd, cq, cq, new QueuePairSpec(QpType.UD, 16, RECVS, 0));
                MemoryRegion buf = pd.registerMemory((long) RECVS * SLOT, Access.LOCAL_WRITE);
                try (RecvRequest rr = new RecvRequest(); SendRequest sr = new SendRequest(); WorkCompletions wcs = new WorkCompletions(16)) {
                    if (!sender) {
                        for (int i = 0; i < RECVS; i++) {
                            RcEndpoint.check(qp.postRecv(rr.prepare(i, buf, (long) i * SLOT, SLOT)), "post_recv");
                        }
                    }
                    UdPeer groupPeer = id.joinMulticast(group, 30_000);
                    assertEquals(0xFFFFFF, groupPeer.remoteQpn(), "multicast QPN");
                    if (sender) {
                        awaitSubscribers("ready");
                        send(pd, qp, cq, buf, sr, wcs, groupPeer);
                    } else {
                        signal("ready");
                        receive(qp, cq, buf, rr, wcs);
                        signal("done");
                    }
                    id.leaveMulticast(group);
                } finally {
                    qp.close();
                    buf.close();
                    pd.close();
                    cq.close();
                }
            } finally {
                id.close();
            }
        }
    }

    private static Path sharedFile(final String what, final int guest) {
        final String shared = System.getenv("LAB_SHARED");
        if (shared == null || shared.isEmpty()) {
            throw new IllegalStateException("LAB_SHARED is not set: run this test through lab/run-junit.sh");
        }
        return Path.of(shared, "mcast-" + what + "-guest" + guest);
    }

    private static void signal(final String what) throws IOException {
        Files.writeString(sharedFile(what, LabEnv.guestIndex()), "1");
    }

    private static boolean allSubscribers(final String what) {
        for (final int guest : SUBSCRIBERS) {
            if (!Files.exists(sharedFile(what, guest))) {
                return false;
            }
        }
        return true;
    }

    private static void awaitSubscribers(final String what) throws InterruptedException {
        final long deadline = System.nanoTime() + READY_WAIT_MS * 1_000_000L;
        while (!allSubscribers(what)) {
            assertTrue(System.nanoTime() < deadline, "subscribers not " + what + " after " + READY_WAIT_MS + " ms");
            Thread.sleep(100);
        }
    }

    private static void send(ProtectionDomain pd, QueuePair qp, CompletionQueue cq, MemoryRegion buf, SendRequest sr,
                             WorkCompletions wcs, UdPeer groupPeer) throws InterruptedException {
        try (AddressHandle ah = groupPeer.createAddressHandle(pd)) {
            long end = System.nanoTime() + SEND_LIMIT_MS * 1_000_000L;
            int sent = 0;
            // send until both subscribers have what they want (a lossy fabric under emulation drops some)
            while (System.nanoTime() < end && !(sent >= WANTED && allSubscribers("done"))) {
                byte[] b = ("mcast " + sent).getBytes(StandardCharsets.UTF_8);
                MemorySegment.copy(b, 0, buf.segment(), ValueLayout.JAVA_BYTE, 0, b.length);
                RcEndpoint.check(qp.postSend(sr.prepareSend(sent, buf, 0, b.length, true)
                        .toUd(ah, groupPeer.remoteQpn(), groupPeer.qkey())), "post_send multicast");
                long deadline = System.nanoTime() + 10_000_000_000L;
                int n = 0;
                while (n == 0 && System.nanoTime() < deadline) {
                    n = cq.poll(wcs);
                    if (n == 0) {
                        Thread.sleep(1);
                    }
                }
                assertEquals(1, n, "send completion");
                assertEquals(WorkCompletions.SUCCESS, wcs.status(0), WorkCompletions.statusText(wcs.status(0)));
                sent++;
                Thread.sleep(50);
            }
            System.out.println("multicast sender: " + sent + " datagrams to " + GROUP);
        }
    }

    private static void receive(QueuePair qp, CompletionQueue cq, MemoryRegion buf, RecvRequest rr, WorkCompletions wcs)
            throws InterruptedException {
        Set<String> got = new HashSet<>();
        long deadline = System.nanoTime() + (SEND_LIMIT_MS + 60_000) * 1_000_000L;
        while (got.size() < WANTED && System.nanoTime() < deadline) {
            int n = cq.poll(wcs);
            for (int i = 0; i < n; i++) {
                assertEquals(WorkCompletions.SUCCESS, wcs.status(i), WorkCompletions.statusText(wcs.status(i)));
                int slot = (int) wcs.wrId(i);
                int len = wcs.byteLength(i) - GRH_BYTES;
                String text = new String(buf.segment().asSlice((long) slot * SLOT + GRH_BYTES, len).toArray(ValueLayout.JAVA_BYTE),
                        StandardCharsets.UTF_8);
                assertTrue(text.startsWith("mcast "), "unexpected datagram: " + text);
                got.add(text);
                RcEndpoint.check(qp.postRecv(rr.prepare(slot, buf, (long) slot * SLOT, SLOT)), "post_recv");
            }
            if (n == 0) {
                Thread.sleep(1);
            }
        }
        System.out.println("multicast subscriber on guest " + LabEnv.guestIndex() + ": " + got.size() + " distinct datagrams");
        assertTrue(got.size() >= WANTED, "received only " + got.size() + " multicast datagrams, wanted " + WANTED);
    }
}
