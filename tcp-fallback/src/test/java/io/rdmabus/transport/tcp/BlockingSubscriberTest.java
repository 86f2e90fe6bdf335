package io.rdmabus.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.spi.StaticSeedDiscovery;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * A subscriber whose callback calls a blocking Reactor operator on the bus's delivery thread fails at once with Reactor's
 * error (the bus's agent threads carry the {@code NonBlocking} marker), instead of stalling the one delivery agent that
 * serves every subscription of the bus: another subscription on the same bus keeps receiving. Real TCP on loopback.
 */
class BlockingSubscriberTest {
    @Test
    @Timeout(60)
    void blockingInASubscriberCallbackFailsThatSubscriberAndStallsNoOther() throws Exception {
        final int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        final String suffix = ProcessHandle.current().pid() + "-" + System.nanoTime();
        try (Bus sub = bus("blocking-sub-" + suffix, Map.of(TcpTransportConfig.BIND, "127.0.0.1:" + port), List.of());
             Bus pubBus = bus("blocking-pub-" + suffix, Map.of(), List.of("127.0.0.1:" + port))) {
            final Topic<String> topic = Topic.of("blocking", Codecs.utf8(), Delivery.RELIABLE);
            final List<String> other = new CopyOnWriteArrayList<>();
            final Disposable otherSubscription = sub.subscribe(topic).subscribe(other::add);
            final AtomicBoolean publishing = new AtomicBoolean(true);
            try (BusPublication<String> pub = pubBus.publication(topic)) {
                // a tick every 10 ms from its own thread, whenever the subscriptions join
                final Thread publisher = Thread.ofPlatform().daemon().start(() -> {
                    for (int i = 0; publishing.get(); i++) {
                        final String tick = "tick" + i;
                        while (publishing.get() && pub.offer(tick) != PublishStatus.OK) {
                            LockSupport.parkNanos(1_000_000);
                        }
                        LockSupport.parkNanos(10_000_000);
                    }
                });
                StepVerifier.create(sub.subscribe(topic).doOnNext(v -> Mono.delay(Duration.ofSeconds(30)).block()))
                    .expectErrorSatisfies(e -> {
                        assertInstanceOf(IllegalStateException.class, e, "Reactor refuses block() on the bus's thread: " + e);
                        assertTrue(e.getMessage().contains("blocking"), e.getMessage());
                    })
                    .verify(Duration.ofSeconds(20)); // far less than the 30 s the callback would have blocked
                final int seenAtTheError = other.size();
                Awaitility.await("the other subscription receives on").atMost(Duration.ofSeconds(20))
                    .until(() -> other.size() >= seenAtTheError + 10);
                publishing.set(false);
                publisher.join(5_000);
            } finally {
                publishing.set(false);
                otherSubscription.dispose();
            }
        }
    }

    private static Bus bus(final String name, final Map<String, String> properties, final List<String> seeds) {
        final var builder = Bus.builder().name(name).transport("tcp").idleStrategy("backoff")
            .discovery(new StaticSeedDiscovery(Map.of("tcp", seeds)));
        properties.forEach(builder::transportProperty);
        return builder.build();
    }
}
