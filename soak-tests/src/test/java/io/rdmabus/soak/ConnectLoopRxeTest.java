package io.rdmabus.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.spi.StaticSeedDiscovery;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.Disposable;

/**
 * The connect/disconnect loop on rxe (issue 6; also issue 4's "after 200 connect/close cycles, QP/CQ/MR counts return
 * to baseline"): in one guest, N times, two buses over the {@code rdma} transport connect (B has A as its seed),
 * exchange a reliable message, and close. Reads {@code rdma res} before, during and after, heap after GC, and the
 * thread list. Fails on growth of pd/cq/qp/cm_id/mr, a cycle that hangs (bounded per cycle), a bus thread left after
 * close, or a thread spinning once everything is closed.
 *
 * <p>Cycles: {@code -Dsoak.connect.cycles=N} or env {@code SOAK_CONNECT_CYCLES} (default 200; the long form is 1000).
 */
@Tag("rxe")
class ConnectLoopRxeTest {
    private static final int PORT_A = 19100;
    private static final int PORT_B = 19300;
    /** Ports rotate over this many values, so the loop also proves a closed bus frees its rdma_cm port for reuse. */
    private static final int PORT_SPREAD = 16;
    private static final long FIRST_CYCLE_BOUND_S = 240;
    private static final long CYCLE_BOUND_S = 60;
    private static final long HEAP_GROWTH_LIMIT_BYTES = 16L << 20;
    private static final long HEAP_HISTOGRAM_FROM_BYTES = 2L << 20;

    private static int cycles() {
        String v = System.getProperty("soak.connect.cycles");
        if (v == null || v.isBlank()) {
            v = System.getenv("SOAK_CONNECT_CYCLES");
        }
        return v == null || v.isBlank() ? 200 : Integer.parseInt(v.trim());
    }

    private static Bus bus(final String name, final String ip, final int port, final List<String> seeds) {
        return Bus.builder().name(name).transport("rdma").idleStrategy("backoff")
            .transportProperty("rdma.bind", ip).transportProperty("rdma.cm.port.base", String.valueOf(port))
            .transportProperty("rdma.cm.port.range", "1").transportProperty("rdma.connect.timeout.ms", "5000")
            .discovery(new StaticSeedDiscovery(Map.of("rdma", seeds))).build();
    }

    /** One cycle: connect, one reliable message A <- B, close both. @return ms taken */
    private static long cycle(final int i, final String ip, final boolean sampleDuring, final List<String> during) throws InterruptedException {
        final long t0 = System.nanoTime();
        final int portA = PORT_A + i % PORT_SPREAD;
        final Topic<String> topic = Topic.of("loop", Codecs.utf8(), Delivery.RELIABLE);
        final Bus a = bus("loop-a" + i, ip, portA, List.of());
        Bus b = null;
        try {
            b = bus("loop-b" + i, ip, PORT_B + i % PORT_SPREAD, List.of(ip + ":" + portA));
            final List<String> got = new CopyOnWriteArrayList<>();
            final Disposable sub = a.subscribe(topic).subscribe(got::add);
            final BusPublication<String> pub = b.publication(topic);
            final String message = "cycle-" + i;
            while (got.isEmpty()) {
                if (pub.offer(message) != PublishStatus.OK) {
                    LockSupport.parkNanos(1_000_000);
                } else {
                    final long waitNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                    while (got.isEmpty() && System.nanoTime() < waitNs) {
                        LockSupport.parkNanos(500_000);
                    }
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException("cycle " + i + " interrupted while exchanging");
                }
            }
            assertEquals(message, got.get(0), "cycle " + i + ": wrong message");
            if (sampleDuring) {
                during.add("cycle " + i + " (both buses open, connected): " + RdmaRes.read(System.getenv().getOrDefault("LAB_RXE_DEV", "rxe0")).brief());
            }
            pub.close();
            sub.dispose();
        } finally {
            // alternate the closing order: the accepting side first on even cycles, the connecting side first on odd ones
            if (i % 2 == 0) {
                a.close();
                if (b != null) {
                    b.close();
                }
            } else {
                if (b != null) {
                    b.close();
                }
                a.close();
            }
        }
        return (System.nanoTime() - t0) / 1_000_000;
    }

    @Test
    @Timeout(value = 3 * 3600, unit = TimeUnit.SECONDS)
    void connectExchangeCloseManyTimesWithoutLeaksOrHangs() throws Exception {
        final String ip = System.getenv("LAB_SELF_IP");
        assertTrue(ip != null && !ip.isBlank(), "LAB_SELF_IP is not set: this test runs inside the rxe lab (lab/run-junit.sh)");
        final String dev = System.getenv().getOrDefault("LAB_RXE_DEV", "rxe0");
        final int n = cycles();
        final RdmaRes before = RdmaRes.read(dev);
        System.out.println("connect-loop: " + n + " cycles on " + dev + " " + ip + "; rdma res before: " + before.brief() + " (all: " + before.counts() + ")");
        final List<String> during = new ArrayList<>();
        final ExecutorService runner = Executors.newSingleThreadExecutor(r -> {
            final Thread t = new Thread(r, "connect-loop");
            t.setDaemon(true);
            return t;
        });
        long heapBaseline = -1;
        long totalMs = 0;
        long maxMs = 0;
        final int sampleEvery = Math.max(1, n / 5);
        try {
            for (int i = 0; i < n; i++) {
                final int cycle = i;
                final boolean sample = i % sampleEvery == 0 || i == n - 1;
                final Future<Long> f = runner.submit(() -> cycle(cycle, ip, sample, during));
                final long ms;
                try {
                    ms = f.get(i == 0 ? FIRST_CYCLE_BOUND_S : CYCLE_BOUND_S, TimeUnit.SECONDS);
                } catch (final TimeoutException ex) {
                    dumpThreads();
                    f.cancel(true);
                    fail("connect-loop: cycle " + i + " hung (no connect+message+close within " + (i == 0 ? FIRST_CYCLE_BOUND_S : CYCLE_BOUND_S) + " s)");
                    return;
                } catch (final ExecutionException ex) {
                    throw new AssertionError("connect-loop: cycle " + i + " failed: " + ex.getCause(), ex.getCause());
                }
                final List<String> left = JvmCheck.awaitNoBusThreads(10_000);
                assertTrue(left.isEmpty(), "connect-loop: cycle " + i + " left bus threads after close: " + left);
                if (i == 0) {
                    heapBaseline = JvmCheck.heapAfterGcBytes(); // after the first cycle loaded and initialised everything
                    System.out.println("connect-loop: first cycle (class loading, FFM init) " + ms + " ms; heap after GC " + (heapBaseline >> 10) + " KiB");
                } else {
                    totalMs += ms;
                    maxMs = Math.max(maxMs, ms);
                }
                if ((i + 1) % sampleEvery == 0) {
                    System.out.println("connect-loop: " + (i + 1) + "/" + n + " cycles, last " + ms + " ms, rdma res now " + RdmaRes.read(dev).brief()
                        + ", heap after GC " + (JvmCheck.heapAfterGcBytes() >> 10) + " KiB");
                }
            }
        } finally {
            runner.shutdownNow();
        }
        // resources are freed synchronously by close; allow the kernel a bounded moment for deferred teardown
        RdmaRes after = RdmaRes.read(dev);
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!after.growthOver(before).isEmpty() && System.nanoTime() < deadlineNs) {
            Thread.sleep(200);
            after = RdmaRes.read(dev);
        }
        final long heapAfter = JvmCheck.heapAfterGcBytes();
        final List<String> spinning = JvmCheck.spinningThreads(2000, 0.2);
        for (final String d : during) {
            System.out.println("connect-loop: rdma res during " + d);
        }
        System.out.println("connect-loop: " + n + " cycles, " + (n > 1 ? totalMs / (n - 1) : 0) + " ms/cycle average after the first, max " + maxMs
            + " ms; rdma res before [" + before.brief() + "] after [" + after.brief() + "]; heap after GC " + (heapBaseline >> 10) + " KiB after cycle 1, "
            + (heapAfter >> 10) + " KiB at the end; bus threads left " + JvmCheck.busThreads() + "; threads using >20% CPU while idle " + spinning);
        if (heapAfter - heapBaseline > HEAP_HISTOGRAM_FROM_BYTES) {
            printClassHistogram(); // what grew: 1000 cycles once ended 15.4 MiB above cycle 1 while 200 cycles end flat
        }
        assertEquals("", after.growthOver(before), "connect-loop: rdma resources grew over " + n + " cycles");
        assertTrue(heapAfter - heapBaseline < HEAP_GROWTH_LIMIT_BYTES, "connect-loop: heap after GC grew by " + ((heapAfter - heapBaseline) >> 10)
            + " KiB over " + n + " cycles (limit " + (HEAP_GROWTH_LIMIT_BYTES >> 10) + " KiB)");
        assertTrue(spinning.isEmpty(), "connect-loop: threads spin after every bus closed: " + spinning);
    }

    /** Prints the top of the live-object class histogram (the DiagnosticCommand MBean's GC.class_histogram). */
    private static void printClassHistogram() {
        try {
            final Object text = java.lang.management.ManagementFactory.getPlatformMBeanServer().invoke(
                new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram", new Object[] {null},
                new String[] {String[].class.getName()});
            final String[] lines = String.valueOf(text).split("\n");
            System.out.println("=== connect-loop: heap grew; class histogram (top 30 by bytes)\n"
                + String.join("\n", java.util.Arrays.copyOf(lines, Math.min(lines.length, 33))));
        } catch (final javax.management.JMException | RuntimeException e) {
            System.out.println("connect-loop: no class histogram: " + e);
        }
    }

    private static void dumpThreads() {
        final StringBuilder sb = new StringBuilder("=== connect-loop thread dump\n");
        for (final Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            sb.append('"').append(e.getKey().getName()).append("\" ").append(e.getKey().getState()).append('\n');
            for (final StackTraceElement el : e.getValue()) {
                sb.append("    at ").append(el).append('\n');
            }
        }
        System.err.println(sb);
    }
}
