package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.Delivery;
import io.rdmabus.IdleStrategies;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;

import java.nio.file.Files;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * BEST_EFFORT over UD across two rxe guests (two hosts on a bridge), in both modes at once: guest 1 runs a unicast and a
 * multicast subscriber transport, guest 2 a publisher of each that has guest 1's listen endpoints as seeds. The guests
 * coordinate through files in {@code LAB_SHARED}: the publishers send (paced) until guest 1 says it has what it wanted.
 */
@Tag("rxe")
@Timeout(value = 400, unit = TimeUnit.SECONDS)
class UdTwoGuestRxeTest {
    private static final int WANTED = 300;
    private static final int PORT_UNICAST = 19901;
    private static final int PORT_MULTICAST = 19902;
    private static final long WAIT_MS = 240_000;

    @Test
    void unicastAndMulticastAcrossTwoGuests() throws Exception {
        LabGuests.subscriberOnGuest1PublisherOnGuest2((self, subscriberIp, errors) -> subscribe(self, errors), UdTwoGuestRxeTest::publish);
    }

    private static RdmaTransport start(final String name, final String self, final int port, final String mode, final List<String> seeds,
                                       final List<Throwable> errors) {
        Map<String, String> p = new HashMap<>();
        p.put(RdmaTransportConfig.CM_PORT_BASE, String.valueOf(port));
        p.put(RdmaTransportConfig.CM_PORT_RANGE, "1");
        p.put(RdmaTransportConfig.BIND, self);
        p.put(UdConfig.MODE, mode);
        RdmaTransport t = new RdmaTransport(RdmaTransportConfig.parse(p));
        t.start(new TransportContext(name, IdleStrategies.supplier("backoff"), errors::add, new StaticSeedDiscovery(Map.of("rdma", seeds))));
        System.err.println(name + " on " + t.listenEndpoint() + ": " + t.udEndpoint());
        return t;
    }

    private static void subscribe(final String self, final List<Throwable> errors) throws Exception {
        RdmaTransport uc = start("g1-unicast", self, PORT_UNICAST, "unicast", List.of(), errors);
        RdmaTransport mc = start("g1-multicast", self, PORT_MULTICAST, "multicast", List.of(), errors);
        try {
            Set<Long> gotUc = ConcurrentHashMap.newKeySet();
            Set<Long> gotMc = ConcurrentHashMap.newKeySet();
            uc.addSubscription(new TopicDescriptor("x-uc", 21, Delivery.BEST_EFFORT, 1000), sink(gotUc));
            mc.addSubscription(new TopicDescriptor("x-mc", 22, Delivery.BEST_EFFORT, 1000), sink(gotMc));
            LabGuests.signal("ud-ready");
            long t0 = System.nanoTime();
            long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while ((gotUc.size() < WANTED || gotMc.size() < WANTED) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            LabGuests.signal("ud-done");
            System.err.println("guest 1 received over UD from guest 2: unicast " + gotUc.size() + " distinct frames (" + uc.udEndpoint().delivered()
                    + " datagrams), multicast " + gotMc.size() + " (" + mc.udEndpoint().delivered() + " datagrams) in "
                    + (System.nanoTime() - t0) / 1_000_000 + " ms");
            assertTrue(gotUc.size() >= WANTED, "unicast across guests: " + gotUc.size());
            assertTrue(gotMc.size() >= WANTED, "multicast across guests: " + gotMc.size());
            assertEquals(0, uc.udEndpoint().malformed() + mc.udEndpoint().malformed());
            Thread.sleep(2000); // let guest 2 see the signal before our connections go
        } finally {
            mc.close();
            uc.close();
        }
    }

    private static void publish(final String self, final String subscriberIp, final List<Throwable> errors) throws Exception {
        LabGuests.awaitFile("ud-ready", WAIT_MS);
        RdmaTransport uc = start("g2-unicast", self, PORT_UNICAST, "unicast", List.of(subscriberIp + ":" + PORT_UNICAST), errors);
        RdmaTransport mc = start("g2-multicast", self, PORT_MULTICAST, "multicast", List.of(subscriberIp + ":" + PORT_MULTICAST), errors);
        try {
            TransportPublication pu = uc.addPublication(new TopicDescriptor("x-uc", 21, Delivery.BEST_EFFORT, 1000));
            TransportPublication pm = mc.addPublication(new TopicDescriptor("x-mc", 22, Delivery.BEST_EFFORT, 1000));
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            long seq = 0;
            long t0 = System.nanoTime();
            while (!Files.exists(LabGuests.shared("ud-done")) && System.nanoTime() < deadline) {
                boolean a = offer(pu, 21, seq);
                boolean b = offer(pm, 22, seq);
                if (a || b) {
                    seq++;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(a && b ? 2 : 20));
            }
            System.err.println("guest 2 published " + seq + " frames on each topic in " + (System.nanoTime() - t0) / 1_000_000 + " ms (unicast "
                    + ((UdPublication) pu).counts().sent() + " datagrams, multicast " + ((UdPublication) pm).counts().sent() + ")");
            assertTrue(Files.exists(LabGuests.shared("ud-done")), "guest 1 never had enough");
            pu.close();
            pm.close();
        } finally {
            mc.close();
            uc.close();
        }
    }

    private static boolean offer(final TransportPublication pub, final int topicId, final long seq) {
        if (pub.tryClaim(FrameHeader.LENGTH + 8) != TransportStatus.OK) {
            return false;
        }
        FrameHeader.write(pub.claim().buffer(), pub.claim().offset(), FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, topicId, 2, seq, 0);
        pub.claim().commit();
        return true;
    }

    private static SubscriptionSink sink(final Set<Long> got) {
        return new AcceptingSink() {
            @Override
            public int onFrame(final DirectBuffer buffer, final int offset, final int length) {
                got.add(FrameHeader.sequence(buffer, offset));
                return CONTINUE;
            }
        };
    }
}
