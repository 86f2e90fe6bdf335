package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.rdmabus.BusException;
import io.rdmabus.Delivery;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.AgentThreads;
import io.rdmabus.spi.HostedAgent;
import io.rdmabus.spi.SubscriptionSink;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;

import reactor.core.CoreSubscriber;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.NonBlocking;

/**
 * Direct emission from a receiving thread that is not the delivering one (a {@code SHARED} bus over TCP or rdma): the
 * receiving thread here is a thread of its own with Reactor's {@code NonBlocking} marker, as TCP's event loops and the
 * rdma poller are, calling the channel as a transport does. The delivery agent runs in a real {@link SharedAgent}:
 * driven cycle by cycle by the test where the order of events must be exact, on its own thread (with a same-bus
 * publisher thread and a requesting thread) for the race. Each value is tagged with the thread that emitted it:
 * {@code d} the receiving thread (direct), {@code r} the delivery agent (ring).
 */
class AnyThreadEmissionTest {
    private static final int MAX_FRAME = 64;
    private static final int RING = 8;
    private static final int REMOTE = 7;
    private static final int LOCAL = 9;
    private static final Duration LIVENESS = Duration.ofSeconds(60);

    private final Topic<Long> topic = Topic.of("any-thread", TestCodecs.LONG, Delivery.RELIABLE);
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();
    private final List<Throwable> subscriberErrors = new CopyOnWriteArrayList<>();
    private final List<String> transportCloses = new CopyOnWriteArrayList<>();
    private final DeliveryAgent deliveryAgent = new DeliveryAgent("any-thread-test", () -> { });
    private final ExecutorService receiving = Executors.newSingleThreadExecutor(r -> new ReceivingThread(r));
    private final UnsafeBuffer localFrame = new UnsafeBuffer(new byte[8]);
    private SharedAgent shared;
    private AgentRunner runner;
    private SubscriptionChannel<Long> channel;
    /** Receiving thread only: the session's next sequence, and whether it is inside the channel's onFrame. */
    private long nextRemoteSequence;
    private volatile boolean insideReceive;
    private long nextLocalSequence;

    /** Stands for TCP's event loop or the rdma poller: a receive thread that refuses Reactor's blocking operators. */
    private static final class ReceivingThread extends Thread implements NonBlocking {
        ReceivingThread(final Runnable r) {
            super(r, "test-receive");
        }
    }

    @AfterEach
    void stop() throws Exception {
        receiving.shutdown();
        assertTrue(receiving.awaitTermination(10, TimeUnit.SECONDS), "the receiving thread ends");
        if (runner != null) {
            runner.close();
        } else if (shared != null) {
            shared.onClose();
        }
        assertEquals(List.of(), errors, "no agent errors");
    }

    /** A channel as a SHARED bus makes it; the test drives the delivery agent's cycles unless {@code agentThread}. */
    private void channel(final boolean agentThread, final boolean fromReceivingThreads) {
        shared = new SharedAgent("any-thread-shared", !agentThread, errors::add, null);
        final HostedAgent delivery = shared.host(deliveryAgent);
        // on its own thread, the agent yields when idle: it takes up a message a moment after it lands, as a busy one does
        final WakeableIdleStrategy idle = agentThread ? new WakeableIdleStrategy(new YieldingIdleStrategy()) : null;
        channel = new SubscriptionChannel<>(topic, SubscribeOptions.<Long>defaults().withRingSize(RING), MAX_FRAME, null, delivery, idle,
            fromReceivingThreads);
        channel.transportSubscription = () -> transportCloses.add(insideReceive && Thread.currentThread() instanceof ReceivingThread
            ? "inside the receive loop" : "outside it");
        channel.subscriberErrors = subscriberErrors::add;
        deliveryAgent.add(channel);
        if (agentThread) {
            runner = new AgentRunner(idle, errors::add, null, shared);
            AgentThreads.start(runner);
        } else {
            shared.doWork(); // starts the delivery agent and registers the channel
        }
    }

    /** Subscribes as {@code DefaultBus.subscribeDirect} wires a back-pressure subscription. */
    private void subscribe(final CoreSubscriber<Received<Long>> subscriber) {
        Flux.<Received<Long>>push(sink -> {
            final Runnable dispose = () -> {
                channel.releaseSubscriber();
                channel.close();
                deliveryAgent.remove(channel);
            };
            channel.cancelAction = dispose;
            channel.sink = sink;
            sink.onDispose(dispose::run);
        }, FluxSink.OverflowStrategy.ERROR).subscribe(subscriber);
    }

    private String where() {
        return Thread.currentThread() instanceof ReceivingThread ? "d" : "r";
    }

    /** On the receiving thread: offers the session's next frames, each until the channel takes it (a transport's retry). */
    private void receive(final long... values) throws Exception {
        receiving.submit(() -> {
            final UnsafeBuffer frame = new UnsafeBuffer(new byte[MAX_FRAME]);
            for (final long value : values) {
                FrameHeader.write(frame, 0, FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, topic.topicId(), REMOTE,
                    nextRemoteSequence, 1L);
                frame.putLong(FrameHeader.LENGTH, value);
                insideReceive = true;
                try {
                    while (channel.onFrame(frame, 0, FrameHeader.LENGTH + 8) == SubscriptionSink.BACK_PRESSURE) {
                        Thread.yield();
                    }
                } finally {
                    insideReceive = false;
                }
                nextRemoteSequence++;
            }
            return null;
        }).get(LIVENESS.toSeconds(), TimeUnit.SECONDS);
    }

    /** A same-bus publication's message ({@link LocalDelivery}), on the calling thread: always through the same-bus ring. */
    private boolean publishLocal(final long value) {
        final long slot = channel.tryClaimLocal();
        if (slot == FrameReceiver.NO_ROOM) {
            return false;
        }
        localFrame.putLong(0, value);
        channel.publishLocal(slot, localFrame, 0, 8, LOCAL, nextLocalSequence++, 1L, 0);
        return true;
    }

    /** Records each signal with the thread kind it came on; requests only as the test says. */
    private final class Recorder extends BaseSubscriber<Received<Long>> {
        final List<String> signals = new CopyOnWriteArrayList<>();
        volatile CountDownLatch holdInOnNext;
        final CountDownLatch inOnNext = new CountDownLatch(1);

        @Override
        protected void hookOnSubscribe(final Subscription subscription) {
            // no initial demand
        }

        @Override
        protected void hookOnNext(final Received<Long> value) {
            final CountDownLatch hold = holdInOnNext;
            if (hold != null) {
                inOnNext.countDown();
                try {
                    assertTrue(hold.await(LIVENESS.toSeconds(), TimeUnit.SECONDS), "held in onNext until the test lets go");
                } catch (final InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }
            signals.add(value.value() + where());
        }

        @Override
        protected void hookOnComplete() {
            signals.add("complete:" + where());
        }

        @Override
        protected void hookOnError(final Throwable error) {
            signals.add("error:" + where());
        }
    }

    @Test
    void emitsDirectlyOnTheReceivingThreadOnlyWithAnEmptyRingAndDemand() throws Exception {
        channel(false, true);
        final Recorder recorder = new Recorder();
        subscribe(recorder);
        receive(0); // no demand: the ring keeps it
        assertEquals(RING - 1, channel.availableCredits(), "buffered in the ring");
        recorder.request(10);
        receive(1); // 0 is in the ring: 1 queues behind it, not around it
        assertTrue(publishLocal(100)); // a same-bus publisher's message, always through the same-bus ring
        receive(2);
        assertEquals(List.of(), recorder.signals, "nothing overtook the ring");
        shared.doWork();
        // each session in its order; the two rings' sessions interleave as the drain takes the rings in turn
        assertEquals(List.of("0r", "1r", "2r"), recorder.signals.stream().filter(s -> !s.equals("100r")).toList());
        assertEquals(4, recorder.signals.size(), "the same-bus message too: " + recorder.signals);
        receive(3, 4); // rings drained, demand left: straight to the subscriber, on the receiving thread
        assertEquals(List.of("3d", "4d"), recorder.signals.subList(4, recorder.signals.size()));
        assertEquals(RING, channel.availableCredits(), "direct messages never took a slot");
        assertEquals(6, channel.stats().messagesDelivered());
        recorder.cancel();
    }

    @Test
    void inInvokerModeTheReceivingThreadNeverEmits() throws Exception {
        channel(false, false); // INVOKER: onNext only inside the application's duty cycle
        final Recorder recorder = new Recorder();
        subscribe(recorder);
        recorder.request(10);
        receive(0);
        assertEquals(List.of(), recorder.signals);
        shared.doWork();
        assertEquals(List.of("0r"), recorder.signals);
        recorder.cancel();
    }

    @Test
    void aReceivingThreadWithoutTheNonBlockingMarkerNeverEmits() {
        channel(false, true);
        final Recorder recorder = new Recorder();
        subscribe(recorder);
        recorder.request(10);
        assertFalse(Thread.currentThread() instanceof NonBlocking);
        receiveOnThisThread(0); // a thread where block() would block: the ring
        assertEquals(List.of(), recorder.signals);
        shared.doWork();
        assertEquals(List.of("0r"), recorder.signals);
        recorder.cancel();
    }

    @Test
    void aCompleteDuringADirectEmissionWaitsForOnNextAndIsSentByTheReceivingThread() throws Exception {
        channel(false, true);
        final Recorder recorder = new Recorder();
        final Future<?> emission = holdADirectEmission(recorder);
        assertTrue(publishLocal(100)); // lands in the ring while the receiving thread holds the emitter flag
        assertEquals(1, deliveryAgent.doWork(), "the agent finds the flag taken: it drains on a later cycle");
        channel.complete(); // what the delivery agent's close does, while onNext runs on the receiving thread
        assertEquals(List.of(), recorder.signals, "no onComplete inside or beside the running onNext");
        recorder.holdInOnNext.countDown();
        emission.get(LIVENESS.toSeconds(), TimeUnit.SECONDS);
        assertEquals(List.of("0d", "complete:d"), recorder.signals,
            "onComplete after onNext returned, sent by the thread that held the flag; the ring's message is not sent after it");
    }

    /**
     * Subscribes {@code recorder} with demand and has the receiving thread emit value 0 directly to it, held inside
     * {@code onNext} until the test counts {@code recorder.holdInOnNext} down.
     *
     * @return the receiving thread's emission, done once onNext returned
     */
    private Future<?> holdADirectEmission(final Recorder recorder) throws InterruptedException {
        recorder.holdInOnNext = new CountDownLatch(1);
        subscribe(recorder);
        recorder.request(10);
        final Future<?> emission = receiving.submit(() -> {
            receiveOnThisThread(0);
            return null;
        });
        assertTrue(recorder.inOnNext.await(LIVENESS.toSeconds(), TimeUnit.SECONDS), "onNext never started on the receiving thread");
        return emission;
    }

    /** On the receiving thread already: one frame of the remote session. */
    private void receiveOnThisThread(final long value) {
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[MAX_FRAME]);
        FrameHeader.write(frame, 0, FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, topic.topicId(), REMOTE, nextRemoteSequence++, 1L);
        frame.putLong(FrameHeader.LENGTH, value);
        insideReceive = true;
        try {
            assertEquals(SubscriptionSink.CONTINUE, channel.onFrame(frame, 0, FrameHeader.LENGTH + 8));
        } finally {
            insideReceive = false;
        }
    }

    @Test
    void aTransportErrorDuringADirectEmissionFailsTheSubscriberAfterOnNextReturns() throws Exception {
        channel(false, true);
        final Recorder recorder = new Recorder();
        final Future<?> emission = holdADirectEmission(recorder);
        channel.onTransportError(new BusException("peer vanished"));
        shared.doWork(); // the agent would fail the subscriber: the flag is taken, so the holder does it
        assertEquals(List.of(), recorder.signals);
        recorder.holdInOnNext.countDown();
        emission.get(LIVENESS.toSeconds(), TimeUnit.SECONDS);
        assertEquals(List.of("0d", "error:d"), recorder.signals, "onError after onNext returned, sent by the flag's holder");
        assertEquals(List.of(), transportCloses, "the error's disposal does not close the transport inside the receive loop");
        shared.doWork(); // the delivery agent's removal command
        assertEquals(List.of("outside it"), transportCloses);
    }

    @Test
    void aCancelInsideADirectEmissionClosesTheTransportAfterTheReceiveLoop() throws Exception {
        channel(false, true);
        final List<String> values = new CopyOnWriteArrayList<>();
        subscribe(new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(final Subscription subscription) {
                request(Long.MAX_VALUE);
            }

            @Override
            protected void hookOnNext(final Received<Long> value) {
                values.add(value.value() + where());
                if (value.value() == 1) {
                    cancel(); // on the receiving thread, inside the transport's receive loop
                }
            }
        });
        receive(0, 1, 2, 3);
        assertEquals(List.of("0d", "1d"), values);
        assertEquals(List.of(), transportCloses, "not closed inside the receive loop");
        shared.doWork(); // the delivery agent's removal command
        assertEquals(List.of("outside it"), transportCloses);
        assertEquals(RING, channel.availableCredits(), "frames after the cancel are dropped, not buffered");
    }

    @Test
    void aDisposeFromAnotherThreadDuringADirectEmissionClosesAtOnceAndStopsTheStream() throws Exception {
        channel(false, true);
        final Recorder recorder = new Recorder();
        final Future<?> emission = holdADirectEmission(recorder);
        recorder.cancel(); // the test thread, while onNext runs on the receiving thread
        assertEquals(List.of("outside it"), transportCloses, "closed at once by the disposing thread");
        recorder.holdInOnNext.countDown();
        emission.get(LIVENESS.toSeconds(), TimeUnit.SECONDS);
        receive(1); // after the dispose: dropped
        shared.doWork(); // the removal command
        assertEquals(List.of("0d"), recorder.signals, "the running onNext finished; nothing after the dispose");
        assertEquals(List.of("outside it"), transportCloses, "closed once");
        assertEquals(RING, channel.availableCredits());
    }

    @Test
    void anOnNextThatThrowsOnTheReceivingThreadCancelsItsSubscriptionAndNothingEscapesIntoTheTransport() throws Exception {
        onNextThrows(true);
    }

    @Test
    void anOnNextThatThrowsInTheAgentsDrainCancelsItsSubscriptionAndTheMessageIsNotOfferedAgain() throws Exception {
        onNextThrows(false);
    }

    private void onNextThrows(final boolean direct) throws Exception {
        channel(false, true);
        final AtomicInteger onNextCalls = new AtomicInteger();
        subscribe(new ThrowingSubscriber(onNextCalls));
        if (direct) {
            receive(0, 1); // each frame CONTINUE, nothing thrown into the receive loop (receive() would fail)
        } else {
            assertTrue(publishLocal(100)); // the ring path: emitted by the delivery agent's drain
            assertTrue(publishLocal(101));
            shared.doWork(); // the agent's error handler would see an escaped exception (checked after each test)
        }
        shared.doWork(); // the removal command
        shared.doWork();
        assertEquals(1, onNextCalls.get(), "no signal after the throw, no message offered twice");
        assertEquals(1, subscriberErrors.size(), "reported once: " + subscriberErrors);
        assertInstanceOf(BusException.class, subscriberErrors.get(0));
        assertTrue(subscriberErrors.get(0).getMessage().contains("any-thread"), subscriberErrors.get(0).getMessage());
        assertEquals(List.of("outside it"), transportCloses, "cancelled as by the subscriber; never closed inside the receive loop");
    }

    /** A raw subscriber that breaks rule 2.13: its onNext throws. */
    private static final class ThrowingSubscriber implements CoreSubscriber<Received<Long>> {
        private final AtomicInteger onNextCalls;

        ThrowingSubscriber(final AtomicInteger onNextCalls) {
            this.onNextCalls = onNextCalls;
        }

        @Override
        public void onSubscribe(final Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(final Received<Long> value) {
            onNextCalls.incrementAndGet();
            throw new IllegalStateException("subscriber bug");
        }

        @Override
        public void onError(final Throwable t) {
            throw new AssertionError("no signal after onNext threw", t);
        }

        @Override
        public void onComplete() {
            throw new AssertionError("no signal after onNext threw");
        }
    }

    /**
     * The race: a receiving thread, a same-bus publisher thread and the delivery agent's own thread all deliver to one
     * subscriber whose demand runs out again and again (granted from another thread, and from inside onNext). Every
     * message arrives once, each session in order, onNext is never entered by two threads at once, and both paths ran.
     */
    @Test
    void aReceiveRacingTheAgentsDrainKeepsEachSessionInOrderAndOnNextSerial() throws Exception {
        final int perSession = 5_000;
        channel(true, true);
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger overlaps = new AtomicInteger();
        final AtomicLong requested = new AtomicLong();
        final AtomicLong received = new AtomicLong();
        final List<Long> remote = new ArrayList<>();
        final List<Long> local = new ArrayList<>();
        final AtomicInteger direct = new AtomicInteger();
        final AtomicInteger viaRing = new AtomicInteger();
        final AtomicInteger directNow = new AtomicInteger(); // 1 while onNext runs on the receiving thread
        final AtomicInteger remoteDone = new AtomicInteger();
        final List<Throwable> streamErrors = new CopyOnWriteArrayList<>();
        final BaseSubscriber<Received<Long>> subscriber = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(final Subscription subscription) {
                // demand comes from the requesting thread and from onNext
            }

            @Override
            protected void hookOnNext(final Received<Long> value) {
                if (inside.getAndIncrement() != 0) {
                    overlaps.incrementAndGet();
                }
                final boolean onReceivingThread = Thread.currentThread() instanceof ReceivingThread;
                if (onReceivingThread) {
                    directNow.set(1);
                }
                for (int spin = 0; spin < 1_000; spin++) {
                    Thread.onSpinWait(); // an onNext that takes a moment: a second thread inside it would be seen
                }
                (value.sessionId() == REMOTE ? remote : local).add(value.value()); // serial signals: one list writer at a time
                (onReceivingThread ? direct : viaRing).incrementAndGet();
                if (value.value() % 5 == 0) {
                    requested.incrementAndGet();
                    request(1); // re-entrant: a request inside onNext
                }
                directNow.set(0);
                inside.decrementAndGet();
                received.incrementAndGet();
            }

            @Override
            protected void hookOnError(final Throwable error) {
                streamErrors.add(error); // e.g. an overflow: a message emitted beyond the demand
            }
        };
        subscribe(subscriber);
        requested.set(1);
        subscriber.request(1);
        receive(0); // ring empty, demand 1, the agent idle: straight from the receiving thread
        Awaitility.await("the first message").atMost(LIVENESS).until(() -> received.get() == 1);
        assertEquals(1, direct.get(), "the first message was emitted directly by the receiving thread");

        final Thread requester = Thread.ofPlatform().daemon().name("test-requester").start(() -> {
            long grant = 1;
            while (received.get() < 2L * perSession && streamErrors.isEmpty()) {
                if (requested.get() - received.get() <= 0) { // demand ran out: grant a little (1..4)
                    grant = grant % 4 + 1;
                    requested.addAndGet(grant);
                    subscriber.request(grant);
                } else {
                    Thread.onSpinWait();
                }
            }
        });
        final Thread publisher = Thread.ofPlatform().daemon().name("test-local-publisher").start(() -> {
            for (long v = 0; v < perSession && streamErrors.isEmpty(); v++) {
                while (directNow.get() == 0 && remoteDone.get() == 0 && streamErrors.isEmpty()) {
                    Thread.onSpinWait(); // aims each message at a direct emission in progress: the agent then finds it
                }
                while (!publishLocal(v) && streamErrors.isEmpty()) {
                    Thread.yield(); // the ring is full: a same-bus publisher is back-pressured
                }
            }
        });
        final long[] rest = new long[perSession - 1];
        for (int i = 0; i < rest.length; i++) {
            rest[i] = i + 1;
        }
        receive(rest);
        remoteDone.set(1);
        publisher.join(LIVENESS.toMillis());
        Awaitility.await("every message of both sessions").atMost(LIVENESS)
            .until(() -> received.get() == 2L * perSession || !streamErrors.isEmpty());
        assertEquals(List.of(), streamErrors, "the stream failed");
        requester.join(LIVENESS.toMillis());
        assertFalse(requester.isAlive() || publisher.isAlive());
        subscriber.cancel();

        assertEquals(0, overlaps.get(), "onNext entered by two threads at once (rule 1.3)");
        final List<Long> expected = new ArrayList<>();
        for (long v = 0; v < perSession; v++) {
            expected.add(v);
        }
        // the lists' writers (serial) counted each message in received after adding it: read after seeing the count
        assertEquals(expected, remote, "the remote session, complete and in order");
        assertEquals(expected, local, "the same-bus session, complete and in order");
        assertTrue(direct.get() > 0 && viaRing.get() > 0, "both paths ran: direct " + direct.get() + ", ring " + viaRing.get());
        assertEquals(2L * perSession, channel.stats().messagesDelivered());
    }
}
