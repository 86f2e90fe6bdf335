package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rdmabus.Delivery;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.HostedAgent;
import io.rdmabus.spi.SubscriptionSink;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.test.StepVerifier;

/**
 * Direct emission ({@link SubscriptionChannel#claimForReceive()}): a frame received on the delivering thread, with an
 * empty ring and a subscriber with demand, is emitted during the receive agent's own duty cycle; otherwise it goes
 * through the ring and the delivery agent, and the order of the stream never changes. Runs a real {@link SharedAgent}
 * in INVOKER mode (cycles on the test thread) hosting a receive agent that hands frames to the channel, as a
 * transport's hosted receive agent does, and the bus's {@link DeliveryAgent}. Each value is tagged with where it was
 * emitted: {@code d} inside the receive agent's cycle (direct), {@code r} by the delivery agent (ring).
 */
class DirectEmissionTest {
    /** Every step runs on the test's thread: a wait this long means an expected signal never came. */
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int MAX_FRAME = 64;
    private static final int RING = 8;
    private static final int SESSION = 7;

    private final Topic<Long> topic = Topic.of("direct", TestCodecs.LONG, Delivery.RELIABLE);
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();
    private final List<String> transportCloses = new CopyOnWriteArrayList<>();
    private final SharedAgent shared = new SharedAgent("test-shared", true, errors::add, null);
    private final DeliveryAgent deliveryAgent = new DeliveryAgent("direct-test", () -> { });
    private final Receiver receiver = new Receiver();
    private final SubscriptionChannel<Long> channel;

    /** Stands for a transport's hosted receive agent: hands its pending frames to the channel in its duty cycle. */
    private final class Receiver implements Agent {
        private final UnsafeBuffer frame = new UnsafeBuffer(new byte[MAX_FRAME]);
        private final ArrayDeque<Long> pending = new ArrayDeque<>();
        private long nextSequence;
        private boolean inCycle;

        void send(final long... values) {
            for (final long v : values) {
                pending.add(v);
            }
        }

        int offerNow(final long value) {
            FrameHeader.write(frame, 0, FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, topic.topicId(), SESSION, nextSequence, 1L);
            frame.putLong(FrameHeader.LENGTH, value);
            final int verdict = channel.onFrame(frame, 0, FrameHeader.LENGTH + 8);
            if (verdict != SubscriptionSink.BACK_PRESSURE) {
                nextSequence++;
            }
            return verdict;
        }

        @Override
        public int doWork() {
            inCycle = true;
            try {
                int work = 0;
                while (!pending.isEmpty() && offerNow(pending.peek()) != SubscriptionSink.BACK_PRESSURE) {
                    pending.poll();
                    work++;
                }
                return work;
            } finally {
                inCycle = false;
            }
        }

        @Override
        public String roleName() {
            return "test-receive";
        }
    }

    DirectEmissionTest() {
        shared.host(receiver); // before the delivery agent, as a transport's agents are: receive first in each cycle
        final HostedAgent delivery = shared.host(deliveryAgent);
        channel = new SubscriptionChannel<>(topic, SubscribeOptions.<Long>defaults().withRingSize(RING), MAX_FRAME, null, delivery, null, false);
        channel.transportSubscription = () -> transportCloses.add(receiver.inCycle ? "inside the receive loop" : "outside it");
        deliveryAgent.add(channel);
        shared.doWork(); // starts both agents and registers the channel
    }

    @AfterEach
    void closeAgents() {
        shared.onClose();
        assertEquals(List.of(), errors, "no agent errors");
    }

    /** The subscription as {@code DefaultBus.subscribeDirect} wires it, each value tagged with where it was emitted. */
    private Flux<String> subscription() {
        return Flux.<Received<Long>>push(sink -> {
            channel.sink = sink;
            sink.onDispose(() -> {
                channel.releaseSubscriber();
                channel.close();
                deliveryAgent.remove(channel);
            });
        }, FluxSink.OverflowStrategy.ERROR).map(r -> r.value() + (receiver.inCycle ? "d" : "r"));
    }

    private void cycle() {
        shared.doWork();
    }

    @Test
    void emitsDirectlyOnlyWhenTheRingIsEmptyAndKeepsTheOrderWhenItIsNot() {
        StepVerifier.create(subscription(), 0)
            .then(() -> {
                receiver.send(0, 1, 2); // no demand: the ring buffers them
                cycle();
            })
            .thenRequest(1)
            .then(() -> {
                receiver.send(3); // the ring holds 0..2: 3 goes behind them, not around them
                cycle();
            })
            .expectNext("0r")
            .thenRequest(10)
            .then(this::cycle)
            .expectNext("1r", "2r", "3r")
            .then(() -> {
                receiver.send(4, 5); // ring drained, demand left: straight to the subscriber
                cycle();
            })
            .expectNext("4d", "5d")
            .thenCancel()
            .verify(WAIT);
        assertEquals(RING, channel.availableCredits(), "direct messages never took a slot");
        assertEquals(6, channel.stats().messagesDelivered());
    }

    /** StepVerifier runs a {@code thenRequest} right after the expectation before it inline, i.e. from onNext. */
    @Test
    void demandOfOneRequestedFromOnNextGetsEveryMessageOfABurstDirectly() {
        StepVerifier.create(subscription(), 1)
            .then(() -> {
                receiver.send(0, 1, 2);
                cycle();
            })
            .expectNext("0d")
            .thenRequest(1)
            .expectNext("1d")
            .thenRequest(1)
            .expectNext("2d")
            .thenCancel()
            .verify(WAIT);
        assertEquals(RING, channel.availableCredits());
    }

    /** Demand of one granted between duty cycles: the first of a burst goes directly, the rest wait in the ring. */
    @Test
    void demandOfOneGrantedBetweenCyclesLeavesTheRestOfABurstInTheRingInOrder() {
        final Runnable betweenCycles = () -> { };
        StepVerifier.create(subscription(), 1)
            .then(() -> {
                receiver.send(0, 1, 2);
                cycle();
            })
            .expectNext("0d")
            .then(betweenCycles)
            .thenRequest(1)
            .then(this::cycle)
            .expectNext("1r")
            .then(betweenCycles)
            .thenRequest(1)
            .then(() -> {
                receiver.send(3); // 2 is still in the ring: 3 queues behind it
                cycle();
            })
            .expectNext("2r")
            .then(betweenCycles)
            .thenRequest(1)
            .then(this::cycle)
            .expectNext("3r")
            .then(betweenCycles)
            .thenRequest(1)
            .then(() -> {
                receiver.send(4);
                cycle();
            })
            .expectNext("4d")
            .thenCancel()
            .verify(WAIT);
        assertEquals(5, channel.stats().messagesDelivered());
    }

    @Test
    void aCancelInsideADirectEmissionStopsTheStreamAndClosesTheTransportAfterTheReceiveLoop() {
        StepVerifier.create(subscription().take(2), 0)
            .thenRequest(Long.MAX_VALUE)
            .then(() -> {
                receiver.send(0, 1, 2, 3);
                cycle();
            })
            .expectNext("0d", "1d")
            .expectComplete()
            .verify(WAIT);
        assertEquals(List.of("outside it"), transportCloses, "closed once, by the delivery agent, not inside the receive loop");
        assertEquals(RING, channel.availableCredits(), "frames after the cancel are dropped, not buffered");
        receiver.send(4);
        cycle();
        assertEquals(2, channel.stats().messagesDelivered());
    }

    @Test
    void aFrameFromAnotherThreadThanTheDeliveringOneGoesThroughTheRing() {
        StepVerifier.create(subscription(), 10)
            .then(() -> assertEquals(SubscriptionSink.CONTINUE, receiver.offerNow(0))) // the test thread, outside a cycle
            .then(() -> assertEquals(RING - 1, channel.availableCredits(), "buffered in the ring"))
            .then(this::cycle)
            .expectNext("0r")
            .thenCancel()
            .verify(WAIT);
        assertTrue(transportCloses.size() == 1, "a cancel outside a direct emission closes the transport at once");
    }
}
