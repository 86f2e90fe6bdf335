package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.Delivery;
import io.rdmabus.IdleStrategies;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportStatus;
import io.rdmabus.spi.TransportSubscription;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;

/**
 * A rate harness below the bus (measures, asserts only correctness and allocation): one publisher transport sends
 * rounds of small reliable frames to one subscriber transport on the same rxe device and prints, per round, frames/s,
 * the CPU time of each transport thread and of the publisher, the pollers' counters (duty cycles, idle cycles,
 * completions, control and credit messages) - so the time per frame can be split into CPU work and waiting - and the
 * bytes each transport thread and the publisher allocated per frame. After the warm-up rounds of a spinning idle
 * strategy (the pollers never sleep, so every duty cycle is data path) the publisher and both pollers must allocate
 * less than one byte per frame: the data path allocates nothing per message. With {@code backoff} the pollers sleep on
 * the completion channel between bursts, and what a sleep allocates is printed per sleep, not asserted.
 */
@Tag("rxe")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RdmaRateRxeTest {
    private static final AtomicInteger PORTS = new AtomicInteger(19800);
    private static final int ROUNDS = 5;
    private static final int FRAMES = 3000;
    /** Rounds before the allocation check: class loading, JIT compilation and lazily built state come first. */
    private static final int WARM_UP_ROUNDS = 2;

    private static RdmaTransport start(final String name, final String idle, final List<String> seeds, final List<Throwable> errors) {
        Map<String, String> props = new HashMap<>();
        props.put(RdmaTransportConfig.CM_PORT_BASE, String.valueOf(PORTS.getAndIncrement()));
        props.put(RdmaTransportConfig.CM_PORT_RANGE, "1");
        String self = System.getenv("LAB_SELF_IP");
        if (self != null && !self.isBlank()) {
            props.put(RdmaTransportConfig.BIND, self.trim());
        }
        RdmaTransport t = new RdmaTransport(RdmaTransportConfig.parse(props));
        t.start(new TransportContext(name, IdleStrategies.supplier(idle), errors::add, new StaticSeedDiscovery(Map.of("rdma", seeds))));
        return t;
    }

    /** Counts frames and checks their order. */
    static final class CountingSink extends AcceptingSink {
        volatile long next;
        volatile long outOfOrder;

        @Override
        public int onFrame(final DirectBuffer buffer, final int offset, final int length) {
            long seq = FrameHeader.sequence(buffer, offset);
            if (seq != next) {
                outOfOrder++;
            }
            next = seq + 1;
            return CONTINUE;
        }
    }

    private static Map<String, Long> threadCpuNs() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Map<String, Long> out = new HashMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String n = t.getName();
            if (n.startsWith("rdma-bus-rdma-") || t == Thread.currentThread() || n.contains("Compiler") || n.startsWith("GC")) {
                String key = t == Thread.currentThread() ? "publisher" : n.replaceAll("[0-9]+$", "");
                out.merge(key, Math.max(0, mx.getThreadCpuTime(t.threadId())), Long::sum);
            }
        }
        return out;
    }

    /** @return bytes allocated so far by each thread of the rdma transports (pollers, cm agents), by thread name */
    private static Map<String, Long> transportAllocatedBytes() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Map<String, Long> out = new HashMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("rdma-bus-rdma-")) {
                out.put(t.getName(), mx.getThreadAllocatedBytes(t.threadId()));
            }
        }
        return out;
    }

    private static long processCpuNs() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    @ParameterizedTest(name = "idle={0}")
    @ValueSource(strings = {"backoff", "yielding"})
    void smallReliableFrameRate(final String idle) throws Exception {
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        RdmaTransport subT = start("rate-sub", idle, List.of(), errors);
        RdmaTransport pubT = start("rate-pub", idle, List.of(subT.listenEndpoint()), errors);
        try {
            TopicDescriptor topic = new TopicDescriptor("rate", 9, Delivery.RELIABLE, 1024);
            CountingSink sink = new CountingSink();
            TransportSubscription s = subT.addSubscription(topic, sink);
            RdmaPublication pub = (RdmaPublication) pubT.addPublication(topic);
            long t0 = System.nanoTime();
            while (!pub.isConnected() && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(30)) {
                Thread.sleep(10);
            }
            assertTrue(pub.isConnected(), "publication never saw the subscriber");
            long seq = 0;
            int frameLength = FrameHeader.LENGTH + 64;
            for (int round = 0; round < ROUNDS; round++) {
                Map<String, Long> cpu0 = threadCpuNs();
                long proc0 = processCpuNs();
                long[] pub0 = pubT.pollerStats();
                long[] sub0 = subT.pollerStats();
                long noSlot0 = pub.noSlot;
                long noCredit0 = pub.noCredit;
                Map<String, Long> alloc0 = transportAllocatedBytes();
                com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
                long pubAlloc0 = mx.getCurrentThreadAllocatedBytes();
                long start = System.nanoTime();
                long target = seq + FRAMES;
                long deadline = start + TimeUnit.SECONDS.toNanos(60);
                while (seq < target && System.nanoTime() < deadline) {
                    if (pub.tryClaim(frameLength) == TransportStatus.OK) {
                        FrameHeader.write(pub.buffer(), pub.offset(), FrameHeader.FLAGS_UNFRAGMENTED, frameLength, 9, 1, seq, 0);
                        pub.commit();
                        seq++;
                    } else {
                        Thread.yield();
                    }
                }
                long pubAllocated = mx.getCurrentThreadAllocatedBytes() - pubAlloc0;
                while (sink.next < seq && System.nanoTime() < deadline) {
                    Thread.yield();
                }
                long wallNs = System.nanoTime() - start;
                Map<String, Long> alloc1 = transportAllocatedBytes();
                Map<String, Long> cpu1 = threadCpuNs();
                long[] pub1 = pubT.pollerStats();
                long[] sub1 = subT.pollerStats();
                StringBuilder sb = new StringBuilder();
                sb.append(String.format("rate idle=%s round %d: %d frames in %d ms = %.0f frames/s; process cpu %.0f%%;", idle, round,
                        FRAMES, wallNs / 1_000_000, FRAMES * 1e9 / wallNs, 100.0 * (processCpuNs() - proc0) / wallNs));
                for (Map.Entry<String, Long> e : cpu1.entrySet()) {
                    long d = e.getValue() - cpu0.getOrDefault(e.getKey(), 0L);
                    if (d > 0) {
                        sb.append(String.format(" %s %d ms,", e.getKey(), d / 1_000_000));
                    }
                }
                sb.append(String.format(" pub[noSlot %d noCredit %d] pubPoller[cycles %d idle %d sleeps %d wc %d ctrl %d] subPoller[cycles %d idle %d"
                        + " sleeps %d wc %d data %d ctrl %d credit %d]", pub.noSlot - noSlot0, pub.noCredit - noCredit0, pub1[0] - pub0[0],
                        pub1[1] - pub0[1], pub1[6] - pub0[6], pub1[2] - pub0[2], pub1[4] - pub0[4], sub1[0] - sub0[0], sub1[1] - sub0[1],
                        sub1[6] - sub0[6], sub1[2] - sub0[2], sub1[3] - sub0[3], sub1[4] - sub0[4], sub1[5] - sub0[5]));
                long sleeps = pub1[6] - pub0[6] + sub1[6] - sub0[6];
                sb.append(String.format(" allocated B/frame: publisher %.2f", (double) pubAllocated / FRAMES));
                Map<String, Double> perFrame = new HashMap<>();
                perFrame.put("publisher", (double) pubAllocated / FRAMES);
                for (Map.Entry<String, Long> e : alloc1.entrySet()) {
                    double b = (double) (e.getValue() - alloc0.getOrDefault(e.getKey(), 0L)) / FRAMES;
                    sb.append(String.format(", %s %.2f", e.getKey(), b));
                    if (e.getKey().contains("poller")) {
                        perFrame.put(e.getKey(), b);
                    }
                }
                if (sleeps > 0) {
                    double pollerBytes = perFrame.entrySet().stream().filter(e -> e.getKey().contains("poller"))
                            .mapToDouble(Map.Entry::getValue).sum() * FRAMES;
                    sb.append(String.format("; pollers %.1f B per completion-channel sleep", pollerBytes / sleeps));
                }
                System.out.println(sb);
                assertEquals(seq, sink.next, "frames missing after round " + round);
                if (round >= WARM_UP_ROUNDS && sleeps == 0) {
                    for (Map.Entry<String, Double> e : perFrame.entrySet()) {
                        assertTrue(e.getValue() < 1.0, "round " + round + ": " + e.getKey() + " allocated " + e.getValue()
                                + " bytes per frame; the data path must allocate nothing per message (" + sb + ")");
                    }
                }
            }
            assertEquals(0, sink.outOfOrder, "frames out of order");
            pub.close();
            s.close();
        } finally {
            pubT.close();
            subT.close();
        }
        assertTrue(errors.isEmpty(), "agent errors: " + errors);
    }
}
