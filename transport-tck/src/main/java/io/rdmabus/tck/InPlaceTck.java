package io.rdmabus.tck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
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
