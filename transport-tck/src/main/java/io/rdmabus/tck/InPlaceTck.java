package io.rdmabus.tck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

import io.rdmabus.Bus;
import io.rdmabus.Delivery;
import io.rdmabus.MessageHeader;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.Transport;

import org.agrona.DirectBuffer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * The zero-copy subscription contract ({@code Bus.subscribeInPlace}) on one transport configuration: whole messages,
 * in order, lossless on a reliable topic (fragmented ones reassembled), the same loss accounting as a copying
 * subscription, a throwing handler does not stop the stream, and dispose stops the handler. Run by each transport's
 * test module with its fixture, beside {@link TransportTck}.
 */
public abstract class InPlaceTck extends TckBase {

    /** What a handler saw of one message: a copy of its bytes and its header fields, taken during the call. */
    private record Seen(byte[] bytes, int sessionId, long sequence, long lostBefore, String thread) {
        static Seen of(final DirectBuffer buffer, final int offset, final int length, final MessageHeader header) {
            final byte[] copy = new byte[length];
            buffer.getBytes(offset, copy);
            return new Seen(copy, header.sessionId(), header.sequence(), header.lostBefore(), Thread.currentThread().getName());
        }
    }

    /** RELIABLE: every message reaches the handler once, in order, from one session, with no loss, including fragmented ones. */
    @Test
    @ScaledTimeout(40)
    void reliableInPlaceDeliversEverythingInOrder() {
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");
        final int maxReliableFrame;
        try (Transport raw = fixture.newRawTransport()) {
            maxReliableFrame = raw.capabilities().maxReliableFrameLength();
        }
        final int fragmented = 3 * maxReliableFrame + 5;
        final Topic<byte[]> topic = topic("inplace-r", Codecs.bytes(), Delivery.RELIABLE).withMaxMessageLength(fragmented);
        final List<Seen> seen = Collections.synchronizedList(new ArrayList<>());
        final Disposable sub = subBus.subscribeInPlace(topic, (buffer, offset, length, header) ->
            seen.add(Seen.of(buffer, offset, length, header)));
        toClose.add(sub::dispose);
        final int n = 5_000;
        final List<byte[]> sent = IntStream.range(0, n)
            .mapToObj(i -> randomBytes(i % 1000 == 999 ? fragmented : 1 + i % (maxReliableFrame - FrameHeader.LENGTH)))
            .toList();

        pubBus.publish(topic, Flux.fromIterable(sent)).block(deliveryTimeout);

        Awaitility.await("all " + n + " messages in the handler").atMost(deliveryTimeout).pollInterval(Duration.ofMillis(10))
            .until(() -> seen.size() >= n);
        final List<Seen> got = List.copyOf(seen);
        assertEquals(n, got.size(), "handler calls");
        for (int i = 0; i < n; i++) {
            assertArrayEquals(sent.get(i), got.get(i).bytes(), "message " + i + " (" + sent.get(i).length + " bytes) differs");
        }
        assertEquals(1, got.stream().map(Seen::sessionId).distinct().count(), "one publish is one session");
        assertTrue(got.stream().allMatch(s -> s.lostBefore() == 0), "a reliable stream reported loss");
        for (int i = 1; i < n; i++) {
            assertTrue(got.get(i).sequence() > got.get(i - 1).sequence(), "sequences not increasing at " + i);
        }
        assertTrue(got.stream().noneMatch(s -> s.thread().equals(Thread.currentThread().getName())),
            "the handler ran on the test's thread");
        final SubscriptionStats stats = statsOf(subBus, topic);
        assertEquals(n + 0L, stats.messagesDelivered(), "messagesDelivered: " + stats);
        assertEquals(0, stats.gapMessages() + stats.droppedBySubscriber() + stats.malformedFrames() + stats.duplicates(),
            "reliable stream counted loss: " + stats);
    }

    /**
     * The point of a zero-copy subscription: in steady state the thread that runs the handler (the transport's receive
     * thread) allocates nothing per message. Measured with the JVM's per-thread allocation counter over 50,000 messages
     * after 20,000 of warm-up. The smallest object is 16 bytes, so the bound, under 8 bytes per message, fails if even
     * every second message allocates one; it leaves room for what the thread allocates per read or per credit rather
     * than per message (TCP's event loop: about 1 byte per message of 64 bytes).
     */
    @Test
    @ScaledTimeout(90)
    void theReceivingThreadAllocatesNothingPerMessage() {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(threads.isThreadAllocatedMemorySupported(), "this JVM cannot count a thread's allocation");
        threads.setThreadAllocatedMemoryEnabled(true);
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");
        final Topic<byte[]> topic = topic("inplace-alloc", Codecs.bytes(), Delivery.RELIABLE);
        final AtomicLong calls = new AtomicLong();
        final AtomicLong checksum = new AtomicLong();
        final AtomicReference<Thread> receiver = new AtomicReference<>();
        final Disposable sub = subBus.subscribeInPlace(topic, (buffer, offset, length, header) -> {
            if (receiver.getPlain() == null) {
                receiver.set(Thread.currentThread());
            }
            checksum.addAndGet(buffer.getByte(offset) + length);
            calls.incrementAndGet();
        });
        toClose.add(sub::dispose);
        final byte[] payload = randomBytes(64);
        final int warmUp = 20_000;
        final int measured = 50_000;

        pubBus.publish(topic, Flux.range(0, warmUp).map(i -> payload)).block(deliveryTimeout.multipliedBy(3));
        Awaitility.await("the " + warmUp + " warm-up messages in the handler").atMost(deliveryTimeout.multipliedBy(3))
            .pollInterval(Duration.ofMillis(10)).until(() -> calls.get() >= warmUp);
        final Thread thread = receiver.get();
        final long before = threads.getThreadAllocatedBytes(thread.threadId());
        pubBus.publish(topic, Flux.range(0, measured).map(i -> payload)).block(deliveryTimeout.multipliedBy(3));
        Awaitility.await("the " + measured + " measured messages in the handler").atMost(deliveryTimeout.multipliedBy(3))
            .pollInterval(Duration.ofMillis(10)).until(() -> calls.get() >= warmUp + measured);
        final long allocated = threads.getThreadAllocatedBytes(thread.threadId()) - before;

        assertEquals(warmUp + measured + 0L, calls.get(), "handler calls");
        assertTrue(allocated < 8L * measured, "the receiving thread " + thread.getName() + " allocated " + allocated + " bytes over "
            + measured + " messages (" + String.format("%.2f", (double) allocated / measured) + " bytes per message)");
        System.out.printf("in-place receive: thread %s allocated %d bytes over %d messages (checksum %d)%n", thread.getName(),
            allocated, measured, checksum.get());
    }

    /** A handler that throws loses nothing else: the stream goes on, and the failed message counts as delivered. */
    @Test
    @ScaledTimeout(30)
    void aThrowingHandlerDoesNotStopTheStream() {
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");
        final Topic<String> topic = topic("inplace-throw", Delivery.RELIABLE);
        final List<String> seen = Collections.synchronizedList(new ArrayList<>());
        final Disposable sub = subBus.subscribeInPlace(topic, (buffer, offset, length, header) -> {
            final String value = buffer.getStringWithoutLengthUtf8(offset, length);
            seen.add(value);
            if (value.endsWith("7")) {
                throw new IllegalStateException("handler fails on " + value + " (expected by the test)");
            }
        });
        toClose.add(sub::dispose);
        final List<String> sent = IntStream.range(0, 100).mapToObj(i -> "m-" + i).toList();

        pubBus.publish(topic, Flux.fromIterable(sent)).block(deliveryTimeout);

        Awaitility.await("all 100 messages in the handler").atMost(deliveryTimeout).pollInterval(Duration.ofMillis(10))
            .until(() -> seen.size() >= sent.size());
        assertEquals(sent, List.copyOf(seen), "values or order differ after handler exceptions");
        assertEquals(100L, statsOf(subBus, topic).messagesDelivered(), "messagesDelivered");
    }

    /** After dispose the handler is not called again, and the subscription leaves the bus's stats. */
    @Test
    @ScaledTimeout(30)
    void disposeStopsTheHandler() throws InterruptedException {
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");
        final Topic<String> topic = topic("inplace-dispose", Delivery.RELIABLE);
        final List<String> seen = Collections.synchronizedList(new ArrayList<>());
        final Disposable sub = subBus.subscribeInPlace(topic, (buffer, offset, length, header) ->
            seen.add(buffer.getStringWithoutLengthUtf8(offset, length)));
        pubBus.publish(topic, Flux.just("before")).block(deliveryTimeout);
        Awaitility.await("the first message in the handler").atMost(deliveryTimeout).until(() -> seen.size() == 1);

        sub.dispose();

        assertTrue(sub.isDisposed(), "isDisposed after dispose");
        assertTrue(subBus.stats().subscriptions().stream().noneMatch(s -> s.topic().equals(topic.name())),
            "a disposed subscription is still in the stats: " + subBus.stats().subscriptions());
        final var late = publication(pubBus, topic);
        for (int i = 0; i < 50; i++) {
            late.offer("after-" + i); // a reliable offer with no subscriber left may be refused: either way none may arrive
        }
        Thread.sleep(scaled(Duration.ofMillis(500)).toMillis());
        assertEquals(List.of("before"), List.copyOf(seen), "the handler ran after dispose");
    }

    private static byte[] randomBytes(final int n) {
        final byte[] b = new byte[n];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }
}
