package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.ConnectionStats;
import io.rdmabus.Delivery;
import io.rdmabus.IdleStrategies;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;
import io.rdmabus.spi.TransportSubscription;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Transport-level checks on real rxe (one guest, loopback), below the bus: frames arrive in order, a sink that
 * back-pressures gets the same frame again and holds the publisher back by credits, close stops every thread.
 */
@Tag("rxe")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaTransportRxeTest {
    private static final AtomicInteger PORTS = new AtomicInteger(18800);

    private static RdmaTransport start(final String name, final List<String> seeds, final List<Throwable> errors,
                                       final Map<String, String> extra) {
        Map<String, String> props = new HashMap<>(extra);
        props.put(RdmaTransportConfig.CM_PORT_BASE, String.valueOf(PORTS.getAndIncrement()));
        props.put(RdmaTransportConfig.CM_PORT_RANGE, "1");
        String self = System.getenv("LAB_SELF_IP");
        if (self != null && !self.isBlank()) {
            props.put(RdmaTransportConfig.BIND, self.trim());
        }
        RdmaTransport t = new RdmaTransport(RdmaTransportConfig.parse(props));
        long t0 = System.nanoTime();
        t.start(new TransportContext(name, IdleStrategies.supplier("backoff"), errors::add,
                new StaticSeedDiscovery(Map.of("rdma", seeds))));
        System.err.println(name + ": started in " + (System.nanoTime() - t0) / 1_000_000 + " ms on " + t.listenEndpoint());
        return t;
    }

    /** Collects frame sequences; back-pressures while {@link #refuse} is positive. */
    static final class Sink implements SubscriptionSink {
        final List<Long> sequences = new CopyOnWriteArrayList<>();
        final AtomicLong refuse = new AtomicLong();
        final AtomicLong offers = new AtomicLong();

        @Override
        public int onFrame(final DirectBuffer buffer, final int offset, final int length) {
            offers.incrementAndGet();
            if (refuse.get() > 0) {
                refuse.decrementAndGet();
                return BACK_PRESSURE;
            }
            sequences.add(FrameHeader.sequence(buffer, offset));
            return CONTINUE;
        }

        @Override
        public long availableCredits() {
            return refuse.get() > 0 ? 0 : Long.MAX_VALUE;
        }

        @Override
        public void onTransportError(final Throwable cause) {
            cause.printStackTrace();
        }
    }

    private static int claimAndSend(final TransportPublication pub, final long seq, final long timeoutMs) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        int status;
        while ((status = pub.tryClaim(FrameHeader.LENGTH + 8)) != TransportStatus.OK && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(100_000);
        }
        if (status == TransportStatus.OK) {
            FrameHeader.write(pub.claim().buffer(), pub.claim().offset(), FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, 7, 1,
                    seq, 0);
            pub.claim().buffer().putLong(pub.claim().offset() + FrameHeader.LENGTH, seq);
            pub.claim().commit();
        }
        return status;
    }

    private static void awaitConnected(final TransportPublication pub) throws InterruptedException {
        long t0 = System.nanoTime();
        while (!pub.isConnected() && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(30)) {
            Thread.sleep(10);
        }
        System.err.println("connected after " + (System.nanoTime() - t0) / 1_000_000 + " ms: " + pub.isConnected());
        assertTrue(pub.isConnected(), "publication never saw the subscriber");
    }

    /** Sends sequences 0..n-1 and waits (at most 30 s) until the sink holds n frames. */
    private static void sendAndAwait(final TransportPublication pub, final Sink sink, final int n) throws InterruptedException {
        for (long i = 0; i < n; i++) {
            assertEquals(TransportStatus.OK, claimAndSend(pub, i, 10_000), "claim " + i);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (sink.sequences.size() < n && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
    }

    @Test
    void framesFlowInOrderAndBackPressureHoldsThePublisher() throws Exception {
        ScheduledExecutorService watchdog = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        ScheduledFuture<?> dump = watchdog.schedule(() -> RdmaFixture.dumpThreads("rxe transport test running for 90 s"), 90,
                TimeUnit.SECONDS);
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        RdmaTransport sub = start("rxe-sub", List.of(), errors, Map.of());
        RdmaTransport pubT = start("rxe-pub", List.of(sub.listenEndpoint()), errors, Map.of());
        try {
            TopicDescriptor topic = new TopicDescriptor("t", 7, Delivery.RELIABLE, 1024);
            Sink sink = new Sink();
            TransportSubscription s = sub.addSubscription(topic, sink);
            TransportPublication pub = pubT.addPublication(topic);
            awaitConnected(pub);
            System.err.println("RC ACK timeout exponent chosen by the kernel (rdma.ack.timeout.exp unset): publisher side "
                    + pubT.liveConnectionAckTimeouts() + ", subscriber side " + sub.liveConnectionAckTimeouts());
            int n = 1000;
            long t0 = System.nanoTime();
            sendAndAwait(pub, sink, n);
            System.err.println(n + " frames in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            List<Long> expected = new ArrayList<>();
            for (long i = 0; i < n; i++) {
                expected.add(i);
            }
            assertEquals(expected, sink.sequences);

            // back-pressure: the sink refuses everything; the publisher must stop within the credit window + send slots
            sink.refuse.set(Long.MAX_VALUE);
            int sent = 0;
            while (claimAndSend(pub, n + sent, 2_000) == TransportStatus.OK) {
                sent++;
                assertTrue(sent < 10_000, "publisher never back-pressured");
            }
            RdmaTransportConfig c = RdmaTransportConfig.parse(Map.of());
            System.err.println("publisher held back after " + sent + " frames");
            assertTrue(sent <= c.dataCredits() + c.sendBuffers(), "sent " + sent + " frames past a refusing sink");
            assertTrue(sink.offers.get() > 1, "the held frame was not offered again");
            sink.refuse.set(0);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (sink.sequences.size() < n + sent && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(n + sent, sink.sequences.size(), "frames lost after back-pressure");
            for (int i = 0; i < n + sent; i++) {
                assertEquals(i, sink.sequences.get(i).longValue(), "order after back-pressure at " + i);
            }
            assertEquals(TransportStatus.OK, claimAndSend(pub, n + sent, 10_000), "publisher did not resume");
            pub.close();
            s.close();
        } finally {
            pubT.close();
            sub.close();
            dump.cancel(false);
            watchdog.shutdownNow();
        }
        Thread.sleep(200);
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            assertFalse(t.getName().startsWith("rdma-bus-rdma-") && t.isAlive(), "thread left after close: " + t.getName());
        }
        assertTrue(errors.isEmpty(), "agent errors: " + errors);
    }

    /** {@code rdma.ack.timeout.exp} reaches each side's QP (each side sets its own), and frames flow over it. */
    @Test
    void theConfiguredAckTimeoutIsOnEveryConnectionsQp() throws Exception {
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        RdmaTransport sub = start("rxe-ack-sub", List.of(), errors, Map.of(RdmaTransportConfig.ACK_TIMEOUT_EXP, "16"));
        RdmaTransport pubT = start("rxe-ack-pub", List.of(sub.listenEndpoint()), errors, Map.of(RdmaTransportConfig.ACK_TIMEOUT_EXP, "14"));
        try {
            TopicDescriptor topic = new TopicDescriptor("ack", 7, Delivery.RELIABLE, 1024);
            Sink sink = new Sink();
            TransportSubscription s = sub.addSubscription(topic, sink);
            TransportPublication pub = pubT.addPublication(topic);
            awaitConnected(pub);
            sendAndAwait(pub, sink, 100);
            assertEquals(100, sink.sequences.size(), "frames over the connection");
            System.err.println("RC ACK timeout exponents: publisher side (14 set) " + pubT.liveConnectionAckTimeouts() + ", subscriber side (16 set) "
                    + sub.liveConnectionAckTimeouts());
            assertEquals(List.of(14), pubT.liveConnectionAckTimeouts(), "the dialling side's QP");
            assertEquals(List.of(16), sub.liveConnectionAckTimeouts(), "the accepting side's QP");
            pub.close();
            s.close();
        } finally {
            pubT.close();
            sub.close();
        }
        assertTrue(errors.isEmpty(), "agent errors: " + errors);
    }

    /**
     * A batch ({@code beginBatch}..{@code endBatch}, the bus's batch offer) posts each connection's frames of the batch
     * with one {@code ibv_post_send}: two subscribers get every frame in order, and each connection counts one data post
     * per batch.
     */
    @Test
    void aBatchPostsEachConnectionsFramesTogether() throws Exception {
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        RdmaTransport sub1 = start("rxe-batch-sub1", List.of(), errors, Map.of());
        RdmaTransport sub2 = start("rxe-batch-sub2", List.of(), errors, Map.of());
        RdmaTransport pubT = start("rxe-batch-pub", List.of(sub1.listenEndpoint(), sub2.listenEndpoint()), errors, Map.of());
        try {
            TopicDescriptor topic = new TopicDescriptor("batch", 9, Delivery.RELIABLE, 1024);
            Sink k1 = new Sink();
            Sink k2 = new Sink();
            TransportSubscription s1 = sub1.addSubscription(topic, k1);
            TransportSubscription s2 = sub2.addSubscription(topic, k2);
            TransportPublication pub = pubT.addPublication(topic);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (live(pubT.route(9)) < 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(2, live(pubT.route(9)), "subscribers connected to the publication within 60 s");
            int n = 960;
            int batch = 32;
            int batches = 0;
            int tries = 0;
            long sent = 0;
            while (sent < n) {
                long before = sent;
                pub.beginBatch();
                try {
                    for (int i = 0; i < batch && sent < n && claimAndSend(pub, sent, 0) == TransportStatus.OK; i++) {
                        sent++;
                    }
                } finally {
                    pub.endBatch();
                }
                batches += sent > before ? 1 : 0; // a batch whose first claim was refused posts nothing
                assertTrue(++tries < 10 * n, "the publication took " + sent + " of " + n + " frames in " + tries + " batches");
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2)); // the guest's pollers keep up
            }
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while ((k1.sequences.size() < n || k2.sequences.size() < n) && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            List<Long> expected = new ArrayList<>();
            for (long i = 0; i < n; i++) {
                expected.add(i);
            }
            assertEquals(expected, k1.sequences, "frames at the first subscriber");
            assertEquals(expected, k2.sequences, "frames at the second subscriber");
            List<ConnectionStats> connections = pubT.connections();
            assertEquals(2, connections.size(), "the publisher's connections: " + connections);
            for (ConnectionStats c : connections) {
                System.err.println("RC batches of " + batch + " (" + batches + " batches): connection " + c.peer() + " " + c.counters());
                assertEquals(n, c.counters().get("messagesOut"), "data sends on " + c);
                assertEquals(batches, c.counters().get("dataPosts"), "one post per batch on " + c);
            }
            pub.close();
            s1.close();
            s2.close();
        } finally {
            pubT.close();
            sub1.close();
            sub2.close();
        }
        assertTrue(errors.isEmpty(), "agent errors: " + errors);
    }

    private static int live(final TopicRoute route) {
        int n = 0;
        for (Connection c : route.subscribers()) {
            n += c.live() ? 1 : 0;
        }
        return n;
    }
}
