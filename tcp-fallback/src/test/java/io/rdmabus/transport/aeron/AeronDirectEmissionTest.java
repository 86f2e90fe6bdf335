package io.rdmabus.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.counters.BusCounters;
import io.rdmabus.counters.CountersFile;
import io.rdmabus.counters.CountersFileReader;
import io.rdmabus.spi.Transport;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * Direct emission over a real Aeron IPC driver (SHARED buses: the Aeron receive agent and the delivery agent share a
 * thread, so a message that finds its ring empty and demand waiting is emitted from inside Aeron's poll). A publisher
 * thread streams numbered messages; the checks are on what the subscriber sees: every message, in order, while the
 * subscriber's demand comes and goes from another thread (so messages alternate between the direct path and the
 * ring), and a subscriber that cancels from {@code onNext} in the middle of a poll leaves the bus able to deliver to
 * the next subscription of the topic.
 */
class AeronDirectEmissionTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final AeronTckFixture fixture = new AeronTckFixture(AeronTckFixture.Mode.IPC);
    private final Bus subscriberBus = fixture.newBus("direct-sub");
    private final Bus publisherBus = fixture.newBus("direct-pub");
    private final AtomicBoolean publishing = new AtomicBoolean(true);

    @AfterEach
    void close() throws Exception {
        publishing.set(false);
        subscriberBus.close();
        publisherBus.close();
        fixture.close();
    }

    /** Publishes "0", "1", ... on its own thread until the test ends (reliable: back-pressure only slows it). */
    private Thread publish(final Topic<String> topic, final int count) {
        final BusPublication<String> publication = publisherBus.publication(topic);
        final Thread thread = new Thread(() -> {
            try (publication) {
                for (int i = 0; i < count && publishing.get(); i++) {
                    int status;
                    while ((status = publication.offer(Integer.toString(i))) != PublishStatus.OK && publishing.get()) {
                        if (status == PublishStatus.CLOSED) {
                            return;
                        }
                        Thread.onSpinWait();
                    }
                }
            }
        }, "direct-emission-publisher");
        thread.setDaemon(true);
        return thread;
    }

    @Test
    void everyMessageArrivesInOrderWhileDemandComesFromAnotherThread() {
        final int n = 20_000;
        final Topic<String> topic = Topic.of("direct.order", Codecs.utf8(), Delivery.RELIABLE);
        final String[] expected = IntStream.range(0, n).mapToObj(Integer::toString).toArray(String[]::new);
        // publishOn requests in small batches from its worker: between batches messages wait in the ring, and
        // the first of each burst after a request goes directly
        StepVerifier.create(subscriberBus.subscribe(topic).publishOn(Schedulers.single(), 8).take(n))
            .then(() -> publish(topic, n).start())
            .expectNext(expected)
            .expectComplete()
            .verify(WAIT);
    }

    /**
     * The transport declares {@code receivesOnAgentHost}, so a SHARED bus emits directly only inside its shared thread's
     * cycle and takes its subscriptions' emitter flag without an atomic operation (SubscriptionChannel's
     * {@code confined}). The declaration is true only if the Aeron receive agent hands frames over on that thread alone
     * (a frame handed over elsewhere would take the ring: slower, never out of order). An in-place handler runs where
     * the transport hands a frame over, and a copying subscriber where the bus signals it: both must see that one thread.
     */
    @Test
    void framesReachTheSubscriptionsOnlyOnTheSharedThreadAsTheTransportDeclares() {
        try (Transport raw = fixture.newRawTransport()) {
            assertTrue(raw.capabilities().receivesOnAgentHost(), "aeron-ipc declares receivesOnAgentHost");
        }
        final int n = 2_000;
        final Topic<String> topic = Topic.of("direct.thread", Codecs.utf8(), Delivery.RELIABLE);
        final Set<String> handlerThreads = ConcurrentHashMap.newKeySet();
        final Set<String> onNextThreads = ConcurrentHashMap.newKeySet();
        final AtomicLong handled = new AtomicLong();
        final Disposable inPlace = subscriberBus.subscribeInPlace(topic, (buffer, offset, length, header) -> {
            handlerThreads.add(Thread.currentThread().getName());
            handled.incrementAndGet();
        });
        try {
            StepVerifier.create(subscriberBus.subscribe(topic).doOnNext(v -> onNextThreads.add(Thread.currentThread().getName())).take(n))
                .then(() -> publish(topic, n).start())
                .expectNextCount(n)
                .expectComplete()
                .verify(WAIT);
            Awaitility.await("all " + n + " messages in the in-place handler").atMost(WAIT).until(() -> handled.get() >= n);
        } finally {
            inPlace.dispose();
        }
        final Set<String> shared = Set.of("rdma-bus-shared-" + subscriberBus.name());
        assertEquals(shared, handlerThreads, "threads that ran the in-place handler");
        assertEquals(shared, onNextThreads, "threads that signalled the copying subscriber");
    }

    @Test
    void aCancelFromOnNextInsideTheReceiveLoopLeavesTheTopicDeliverableAndTheAgentsWithoutErrors() throws Exception {
        final Topic<String> topic = Topic.of("direct.cancel", Codecs.utf8(), Delivery.RELIABLE);
        final Topic<String> other = Topic.of("direct.other", Codecs.utf8(), Delivery.RELIABLE);
        final Thread publisher = publish(topic, Integer.MAX_VALUE);
        final Disposable[] idle = new Disposable[1];
        // take(50) cancels from the 50th onNext, on the bus's shared thread, inside the Aeron receive agent's loop over
        // its subscriptions; a second subscription after it in that loop (another topic) must not be disturbed
        StepVerifier.create(subscriberBus.subscribe(topic).take(50).count())
            .then(() -> {
                idle[0] = subscriberBus.subscribe(other).subscribe();
                publisher.start();
            })
            .expectNext(50L)
            .expectComplete()
            .verify(WAIT);
        // the stream goes on: a new subscription of the topic on the same bus receives consecutive messages
        StepVerifier.create(subscriberBus.subscribe(topic).take(100).collectList())
            .assertNext(values -> {
                final int first = Integer.parseInt(values.get(0));
                for (int i = 0; i < values.size(); i++) {
                    if (Integer.parseInt(values.get(i)) != first + i) {
                        throw new AssertionError("message " + i + " of the second subscription is " + values.get(i) + ", not "
                            + (first + i) + ": " + values);
                    }
                }
            })
            .expectComplete()
            .verify(WAIT);
        idle[0].dispose();
        final Path file = BusCounters.directory(null).resolve(CountersFile.fileName(subscriberBus.name(), ProcessHandle.current().pid()));
        final List<String> errors = new ArrayList<>();
        try (CountersFileReader reader = CountersFileReader.open(file)) {
            reader.readErrors((count, first, last, text) -> errors.add(text));
        }
        assertEquals(List.of(), errors, "agent errors of the subscribing bus (its counters file " + file + ")");
    }
}
