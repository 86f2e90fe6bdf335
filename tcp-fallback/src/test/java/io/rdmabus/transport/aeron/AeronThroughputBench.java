package io.rdmabus.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.aeron.driver.MediaDriver;
import io.rdmabus.Bus;
import io.rdmabus.BusBuilder;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.spi.StaticSeedDiscovery;

import org.agrona.CloseHelper;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.Disposable;

/**
 * Throughput of 64-byte messages through the bus over aeron-ipc and aeron-udp (not a unit test: tagged "bench",
 * excluded by default). Run: {@code mvn -pl tcp-fallback test -Dsurefire.groups=bench -Dsurefire.excludedGroups=rxe
 * -Dtest=AeronThroughputBench}; results go to the test output.
 */
@Tag("bench")
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class AeronThroughputBench {
    private static final int MESSAGES = Integer.getInteger("bench.messages", 2_000_000);
    private static final int WARMUP = Integer.getInteger("bench.warmup", 200_000);

    @Test
    void ipcReliable() throws Exception {
        run("aeron-ipc", Delivery.RELIABLE, "shared");
    }

    @Test
    void udpReliable() throws Exception {
        run("aeron-udp", Delivery.RELIABLE, "shared");
    }

    @Test
    void udpBestEffort() throws Exception {
        run("aeron-udp", Delivery.BEST_EFFORT, "shared");
    }

    @Test
    void udpReliableDedicatedDriver() throws Exception {
        run("aeron-udp", Delivery.RELIABLE, "dedicated");
    }

    private static void run(final String transport, final Delivery delivery, final String threading) throws Exception {
        final MediaDriver shared = transport.equals("aeron-ipc") ? AeronTransportTest.launchDriver("bench") : null;
        final String endpoint = "127.0.0.1:" + AeronTestSupport.freeUdpPort();
        Bus pub = null;
        Bus sub = null;
        try {
            pub = builder(transport, shared, "bench-pub", endpoint, threading).build();
            sub = builder(transport, shared, "bench-sub", "127.0.0.1:" + AeronTestSupport.freeUdpPort(), threading)
                .discovery(new StaticSeedDiscovery(Map.of("aeron-udp", List.of(endpoint)))).build();
            final Topic<byte[]> topic = Topic.of("bench", Codecs.bytes(), delivery);
            final AtomicLong received = new AtomicLong();
            final Disposable d = sub.subscribe(topic, SubscribeOptions.<byte[]>defaults().withRingSize(16384))
                .subscribe(v -> received.incrementAndGet());
            final BusPublication<byte[]> p = pub.publication(topic);
            final byte[] payload = new byte[64];
            while (!p.isConnected()) {
                Thread.sleep(5);
            }
            Thread.sleep(200);
            send(p, WARMUP, payload);
            awaitCount(received, WARMUP, delivery);
            final long start = System.nanoTime();
            final long base = received.get();
            final long backPressured = send(p, MESSAGES, payload);
            final long publishedNs = System.nanoTime() - start;
            awaitCount(received, base + MESSAGES, delivery);
            final long totalNs = System.nanoTime() - start;
            final long got = received.get() - base;
            System.out.printf("BENCH %s %s driver=%s: %d x 64 B: publish %.0f msg/s, end-to-end %.0f msg/s (%d received, %d back-pressured"
                    + " offers)%n", transport, delivery, threading, MESSAGES, MESSAGES * 1e9 / publishedNs, got * 1e9 / totalNs, got,
                backPressured);
            assertTrue(got > 0);
            d.dispose();
        } finally {
            CloseHelper.quietCloseAll(pub, sub, shared);
        }
    }

    private static BusBuilder builder(final String transport, final MediaDriver shared, final String name, final String endpoint,
                                      final String threading) {
        final BusBuilder b = Bus.builder().name(name).transport(transport).transportProperty("driver.threading", threading);
        if (shared != null) {
            b.transportProperty("aeron.dir", shared.aeronDirectoryName());
        } else {
            b.transportProperty("endpoint", endpoint);
        }
        return b;
    }

    private static long send(final BusPublication<byte[]> p, final int n, final byte[] payload) {
        long backPressured = 0;
        for (int i = 0; i < n; i++) {
            int status;
            while ((status = p.offer(payload)) != PublishStatus.OK) {
                backPressured++;
                if (status == PublishStatus.CLOSED) {
                    throw new IllegalStateException("closed");
                }
                Thread.onSpinWait();
            }
        }
        return backPressured;
    }

    private static void awaitCount(final AtomicLong received, final long target, final Delivery delivery) throws InterruptedException {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        long last = -1;
        long stableSinceNs = System.nanoTime();
        while (received.get() < target && System.nanoTime() < deadlineNs) {
            Thread.sleep(1);
            final long now = received.get();
            if (now != last) {
                last = now;
                stableSinceNs = System.nanoTime();
            } else if (delivery == Delivery.BEST_EFFORT && System.nanoTime() - stableSinceNs > TimeUnit.SECONDS.toNanos(1)) {
                return; // best effort may lose: stop when nothing arrives for a second
            }
        }
    }
}
