package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.Delivery;
import io.rdmabus.IdleStrategies;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.rdma.verbs.Access;
import io.rdmabus.rdma.verbs.AddressHandle;
import io.rdmabus.rdma.verbs.CompletionQueue;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.ProtectionDomain;
import io.rdmabus.rdma.verbs.QpType;
import io.rdmabus.rdma.verbs.QueuePair;
import io.rdmabus.rdma.verbs.QueuePairSpec;
import io.rdmabus.rdma.verbs.SendRequest;
import io.rdmabus.rdma.verbs.UdPeer;
import io.rdmabus.rdma.verbs.VerbsContext;
import io.rdmabus.rdma.verbs.WorkCompletions;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Discovery over the UD control group across two rxe guests, with NO seed anywhere: guest 2 runs two publisher transports
 * (one bus in {@code rdma.ud.mode=unicast} with a bus secret, one in {@code multicast} with {@code rdma.secret=none}),
 * each publishing a RELIABLE and a BEST_EFFORT topic, plus an intruder: a transport of the first bus's
 * {@code rdma.domain} with another bus secret, publishing and subscribing the same topics. Guest 1 runs a subscriber
 * transport per bus. Each subscriber must find its publisher through the adverts alone and get both topics (the
 * RELIABLE one complete and in order); the intruder must hear no advert and connect to nobody. Guest 1 also sends
 * forged adverts from a raw UD QP with the first bus's Q_Key (as someone who read it off the wire would): one with a
 * MAC of another secret pointing at the intruder, one without a MAC, one with a bad magic; the first two are rejected,
 * the third counted malformed, and none is dialled. A third transport of the unicast bus on guest 1 starts with no
 * subscription: it hears the publisher but dials nobody; once it subscribes to the RELIABLE topic it dials the
 * publisher and gets the stream in order from its join. The guests coordinate only the end, through {@code LAB_SHARED}.
 */
@Tag("rxe")
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class DiscoveryRxeTest {
    private static final int WANTED = 200;
    private static final long WAIT_MS = 420_000;
    private static final int PORT_UC = 19911;
    private static final int PORT_MC = 19912;
    private static final int PORT_INTRUDER = 19913;
    private static final int PORT_LATE = 19914;
    private static final String SECRET = "discovery test bus secret, 16+ bytes";
    private static final String OTHER_SECRET = "the intruder's own secret, 16+ bytes";
    private static final int UC_R = 31;
    private static final int UC_B = 32;
    private static final int MC_R = 33;
    private static final int MC_B = 34;

    @Test
    void publisherAndSubscriberWithoutSeedsFindEachOtherAndForeignAdvertsAreRejected() throws Exception {
        int guest = Integer.parseInt(LabGuests.require("LAB_GUEST_INDEX"));
        int guests = Integer.parseInt(LabGuests.require("LAB_GUEST_COUNT"));
        assertTrue(guests >= 2, "needs 2 guests: lab/run-junit.sh --module rdma-transport --guests 2");
        String self = LabGuests.require("LAB_SELF_IP").trim();
        String publisherIp = LabGuests.require("LAB_GUEST_IPS").trim().split("\\s+")[1];
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        if (guest == 1) {
            subscribe(self, publisherIp, errors);
        } else if (guest == 2) {
            publish(self, errors);
        }
        assertTrue(errors.isEmpty(), "errors: " + errors);
    }

    private static Map<String, String> unicastBus(final String secret) {
        return Map.of(UdConfig.DOMAIN, "disc-uc", UdConfig.MODE, "unicast", AuthConfig.SECRET, secret);
    }

    private static Map<String, String> multicastBus() {
        return Map.of(UdConfig.DOMAIN, "disc-mc", UdConfig.MODE, "multicast", AuthConfig.SECRET, "none");
    }

    /** A transport with discovery over the control group every 500 ms and an empty seed list. */
    private static RdmaTransport start(final String name, final String self, final int port, final Map<String, String> bus, final List<Throwable> errors) {
        Map<String, String> p = new HashMap<>(bus);
        p.put(RdmaTransportConfig.CM_PORT_BASE, String.valueOf(port));
        p.put(RdmaTransportConfig.CM_PORT_RANGE, "1");
        p.put(RdmaTransportConfig.BIND, self);
        p.put(UdConfig.RECV_BUFFERS, "512");
        p.put(DiscoveryConfig.MODE, "multicast");
        p.put(DiscoveryConfig.INTERVAL_MS, "500");
        RdmaTransportConfig config = RdmaTransportConfig.parse(p);
        RdmaTransport t = new RdmaTransport(config);
        t.start(new TransportContext(name, IdleStrategies.supplier("backoff"), errors::add, new StaticSeedDiscovery(Map.of("rdma", List.of()))));
        System.err.println(name + " on " + t.listenEndpoint() + ": " + t.udEndpoint() + ", control group "
                + UdConfig.ipv4Text(config.discovery().controlGroup(config.ud())));
        return t;
    }

    private static void subscribe(final String self, final String publisherIp, final List<Throwable> errors) throws Exception {
        RdmaTransport uc = start("g1-disc-uc", self, PORT_UC, unicastBus(SECRET), errors);
        RdmaTransport mc = start("g1-disc-mc", self, PORT_MC, multicastBus(), errors);
        RdmaTransport late = start("g1-disc-late", self, PORT_LATE, unicastBus(SECRET), errors);
        try {
            Sink ucR = new Sink();
            Sink ucB = new Sink();
            Sink mcR = new Sink();
            Sink mcB = new Sink();
            uc.addSubscription(new TopicDescriptor("disc-r", UC_R, Delivery.RELIABLE, 1000), ucR);
            uc.addSubscription(new TopicDescriptor("disc-b", UC_B, Delivery.BEST_EFFORT, 1000), ucB);
            mc.addSubscription(new TopicDescriptor("disc-mr", MC_R, Delivery.RELIABLE, 1000), mcR);
            mc.addSubscription(new TopicDescriptor("disc-mb", MC_B, Delivery.BEST_EFFORT, 1000), mcB);
            forgeAdverts(uc, self, publisherIp);
            long t0 = System.nanoTime();
            long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while ((ucR.size() < WANTED || ucB.size() < WANTED || mcR.size() < WANTED || mcB.size() < WANTED) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            long tookMs = (System.nanoTime() - t0) / 1_000_000;
            Thread.sleep(1500); // a dial caused by a forged advert would have happened by now (cm cycle 25 ms, connect timeout 3 s)
            System.err.println("guest 1 after " + tookMs + " ms: unicast bus R " + ucR.size() + " B " + ucB.size() + ", multicast bus R " + mcR.size()
                    + " B " + mcB.size() + "\n  uc counters " + uc.counters() + "\n  mc counters " + mc.counters());
            assertTrue(ucR.size() >= WANTED && ucB.size() >= WANTED, "unicast bus found its publisher by discovery: R " + ucR.size() + " B " + ucB.size());
            assertTrue(mcR.size() >= WANTED && mcB.size() >= WANTED, "multicast bus found its publisher by discovery: R " + mcR.size() + " B " + mcB.size());
            ucR.assertContiguousFromZero();
            mcR.assertContiguousFromZero();
            for (RdmaTransport t : List.of(uc, mc)) {
                Map<String, Long> c = t.counters();
                assertTrue(c.get("advertsReceived") > 0 && c.get("discoveredPeers") >= 1 && c.get("discoveryDials") >= 1 && c.get("advertsSent") > 0,
                        "discovery counters: " + c);
                assertEquals(1, t.liveConnectionCount(), "one connection: to its publisher only; " + c);
                assertEquals(0, c.get("refusedPeers"), "nobody dialled a forged endpoint (the intruder would refuse): " + c);
            }
            assertEquals(2, uc.counters().get("advertsRejected"), "the forged adverts with a foreign MAC and without a MAC: " + uc.counters());
            assertEquals(1, uc.counters().get("advertsMalformed"), "the forged advert with a bad magic: " + uc.counters());
            assertEquals(0, mc.counters().get("advertsRejected") + mc.counters().get("advertsMalformed"), mc.counters().toString());
            subscribeLate(late, deadline);
            LabGuests.signal("disc-done");
            LabGuests.awaitFile("disc-pub-checked", WAIT_MS); // guest 2 checks its intruder while our side is still up
        } finally {
            if (!Files.exists(LabGuests.shared("disc-done"))) {
                LabGuests.signal("disc-done");
            }
            late.close();
            mc.close();
            uc.close();
        }
    }

    /**
     * A transport that heard the publisher's adverts for seconds without subscribing to anything has dialled nobody;
     * its first subscription to an advertised topic makes it dial (a command to its cm agent, not the next advert), and
     * it gets the RELIABLE stream without a gap from where it joined.
     */
    private static void subscribeLate(final RdmaTransport late, final long deadlineNs) throws InterruptedException {
        Map<String, Long> before = late.counters();
        assertTrue(before.get("advertsReceived") > 0 && before.get("discoveredPeers") >= 1, "the late transport heard the publisher: " + before);
        assertEquals(0, before.get("discoveryDials"), "no subscription, no dial: " + before);
        assertEquals(0, late.liveConnectionCount(), "no subscription, no connection: " + before);
        Sink got = new Sink();
        long t0 = System.nanoTime();
        late.addSubscription(new TopicDescriptor("disc-r", UC_R, Delivery.RELIABLE, 1000), got);
        while (got.size() == 0 && System.nanoTime() < deadlineNs) {
            Thread.sleep(5);
        }
        long firstMs = (System.nanoTime() - t0) / 1_000_000;
        while (got.size() < WANTED && System.nanoTime() < deadlineNs) {
            Thread.sleep(20);
        }
        Map<String, Long> after = late.counters();
        System.err.println("guest 1 late subscription: first frame " + firstMs + " ms after addSubscription (adverts every 500 ms), " + got.size()
                + " frames\n  late counters " + after);
        assertTrue(got.size() >= WANTED, "the late subscription got the stream: " + got.size());
        assertTrue(after.get("discoveryDials") >= 1, "it dialled the advertiser: " + after);
        assertEquals(1, late.liveConnectionCount(), "one connection, to the publisher: " + after);
        got.assertContiguous();
    }

    /**
     * Raw adverts from a UD QP of our own to the unicast bus's subscriber QP with that bus's Q_Key: an attacker who read
     * the Q_Key off the wire. They name the intruder's endpoint and the bus's topics, so accepting one would make the
     * subscriber dial the intruder (and count a refused peer).
     */
    private static void forgeAdverts(final RdmaTransport target, final String self, final String publisherIp) throws Exception {
        UdEndpoint ep = target.udEndpoint();
        int intruder = UdConfig.ipv4(publisherIp);
        byte[] other = OTHER_SECRET.getBytes(StandardCharsets.UTF_8);
        ByteBuffer page = ByteBuffer.allocate(1024);
        List<byte[]> forged = new ArrayList<>();
        int[] topics = {UC_R, UC_B};
        int n = Advert.encode(page, 0x7777_0000_0000_0001L, intruder, PORT_INTRUDER, 0, 1, topics, 0, 2, other, "disc-uc");
        forged.add(java.util.Arrays.copyOf(page.array(), n)); // MAC of another secret
        n = Advert.encode(page, 0x7777_0000_0000_0002L, intruder, PORT_INTRUDER, 0, 1, topics, 0, 2, null, "disc-uc");
        forged.add(java.util.Arrays.copyOf(page.array(), n)); // no MAC
        byte[] badMagic = java.util.Arrays.copyOf(page.array(), n);
        badMagic[Advert.MAGIC_OFFSET] ^= 0x55;
        forged.add(badMagic);
        try (VerbsContext ctx = VerbsContext.open(System.getenv().getOrDefault("LAB_RXE_DEV", "rxe0"))) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            CompletionQueue cq = ctx.createCompletionQueue(64, null);
            QueuePair qp = pd.createQueuePair(new QueuePairSpec(QpType.UD, 16, 1, 0), cq, cq);
            MemoryRegion mr = pd.registerMemory(4096, Access.NONE);
            int sgid = ctx.findGidIndex(1, UdPeer.ipv4Gid(UdConfig.ipv4(self)));
            assertTrue(sgid >= 0, "GID of " + self);
            AddressHandle ah = UdPeer.ofGid(UdPeer.ipv4Gid(UdConfig.ipv4(self)), sgid, 1, ep.qpn, ep.qkey).createAddressHandle(pd);
            try (SendRequest sr = new SendRequest(); WorkCompletions wcs = new WorkCompletions(16)) {
                qp.toRtsUd(1, 0x4321);
                UnsafeBuffer b = new UnsafeBuffer(mr.address(), 4096);
                for (int i = 0; i < forged.size(); i++) {
                    byte[] d = forged.get(i);
                    b.putBytes(i * 1024, d);
                    assertEquals(0, qp.postSend(sr.prepareSend(i, mr, i * 1024, d.length, true).toUd(ah, ep.qpn, ep.qkey)));
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    int got = 0;
                    while (got == 0 && System.nanoTime() < deadline) {
                        got = cq.poll(wcs);
                    }
                    assertEquals(1, got, "send completion");
                    assertEquals(WorkCompletions.SUCCESS, wcs.status(0), WorkCompletions.statusText(wcs.status(0)));
                }
            } finally {
                ah.close();
                qp.close();
                mr.close();
                pd.close();
                cq.close();
            }
        }
    }

    private static void publish(final String self, final List<Throwable> errors) throws Exception {
        RdmaTransport uc = start("g2-disc-uc", self, PORT_UC, unicastBus(SECRET), errors);
        RdmaTransport mc = start("g2-disc-mc", self, PORT_MC, multicastBus(), errors);
        RdmaTransport intruder = start("g2-disc-intruder", self, PORT_INTRUDER, unicastBus(OTHER_SECRET), errors);
        try {
            TopicDescriptor ucR = new TopicDescriptor("disc-r", UC_R, Delivery.RELIABLE, 1000);
            TopicDescriptor ucB = new TopicDescriptor("disc-b", UC_B, Delivery.BEST_EFFORT, 1000);
            Sink intruderGot = new Sink();
            intruder.addSubscription(ucR, intruderGot);
            intruder.addSubscription(ucB, intruderGot);
            TransportPublication[] pubs = {uc.addPublication(ucR), uc.addPublication(ucB),
                mc.addPublication(new TopicDescriptor("disc-mr", MC_R, Delivery.RELIABLE, 1000)),
                mc.addPublication(new TopicDescriptor("disc-mb", MC_B, Delivery.BEST_EFFORT, 1000)),
                intruder.addPublication(ucR), intruder.addPublication(ucB)};
            int[] topicIds = {UC_R, UC_B, MC_R, MC_B, UC_R, UC_B};
            long[] seq = new long[pubs.length];
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while (!Files.exists(LabGuests.shared("disc-done")) && System.nanoTime() < deadline) {
                for (int i = 0; i < pubs.length; i++) {
                    if (offer(pubs[i], topicIds[i], seq[i])) {
                        seq[i]++; // RELIABLE: not sent (NOT_CONNECTED) until a subscriber is there, so its sequence starts at 0
                    }
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
            System.err.println("guest 2 published (uc R, uc B, mc R, mc B, intruder R, intruder B) " + java.util.Arrays.toString(seq)
                    + "\n  uc counters " + uc.counters() + "\n  mc counters " + mc.counters() + "\n  intruder counters " + intruder.counters()
                    + ", intruder received " + intruderGot.size());
            assertTrue(Files.exists(LabGuests.shared("disc-done")), "guest 1 never had enough");
            Map<String, Long> ic = intruder.counters();
            assertEquals(0, ic.get("advertsReceived"), "the intruder (another secret, so another Q_Key) hears no advert of the bus: " + ic);
            assertEquals(0, intruder.liveConnectionCount(), "nobody connected to the intruder, it connected to nobody: " + ic);
            assertEquals(0, intruderGot.size(), "the intruder received nothing");
            assertEquals(0, seq[4], "the intruder's RELIABLE publication never had a subscriber");
            for (RdmaTransport t : List.of(uc, mc)) {
                assertTrue(t.counters().get("advertsSent") > 0 && t.counters().get("advertsReceived") > 0, "heard the subscriber: " + t.counters());
            }
            assertEquals(2, uc.liveConnectionCount(), "dialled by its subscriber and its late subscriber: " + uc.counters());
            assertEquals(1, mc.liveConnectionCount(), "dialled by its subscriber: " + mc.counters());
            LabGuests.signal("disc-pub-checked");
            for (TransportPublication p : pubs) {
                p.close();
            }
        } finally {
            if (!Files.exists(LabGuests.shared("disc-pub-checked"))) {
                LabGuests.signal("disc-pub-checked");
            }
            intruder.close();
            mc.close();
            uc.close();
        }
    }

    private static boolean offer(final TransportPublication pub, final int topicId, final long seq) {
        if (pub.tryClaim(FrameHeader.LENGTH + 8) != TransportStatus.OK) {
            return false;
        }
        FrameHeader.write(pub.claim().buffer(), pub.claim().offset(), FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, topicId, 3, seq, 0);
        pub.claim().commit();
        return true;
    }

    /** Records every frame's sequence in arrival order. */
    private static final class Sink extends AcceptingSink {
        private final List<Long> sequences = new CopyOnWriteArrayList<>();

        @Override
        public int onFrame(final DirectBuffer buffer, final int offset, final int length) {
            sequences.add(FrameHeader.sequence(buffer, offset));
            return SubscriptionSink.CONTINUE;
        }

        int size() {
            return sequences.size();
        }

        void assertContiguousFromZero() {
            List<Long> copy = new ArrayList<>(sequences);
            assertTrue(copy.isEmpty() || copy.get(0) == 0, "RELIABLE stream starts at " + copy.get(0) + ", not 0");
            assertContiguous();
        }

        /** Each sequence is one more than the one before (a late joiner starts where it joined). */
        void assertContiguous() {
            List<Long> copy = new ArrayList<>(sequences);
            for (int i = 1; i < copy.size(); i++) {
                assertEquals(copy.get(i - 1) + 1, copy.get(i), "RELIABLE frame " + i + " of " + copy.size() + " out of order or missing");
            }
        }
    }
}
