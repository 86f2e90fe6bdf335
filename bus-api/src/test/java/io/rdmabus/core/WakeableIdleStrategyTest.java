package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.Delivery;
import io.rdmabus.IdleStrategies;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.IdleSleeper;
import io.rdmabus.spi.SubscriptionSink;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * A message handed to the ring by another thread than the delivering one (as TCP's event loops and the rdma poller
 * do) wakes the bus's shared thread from its idle park. The shared thread here idles under a strategy that parks for
 * far longer than the test waits, so only the wake can deliver the messages: without it Awaitility times out.
 */
class WakeableIdleStrategyTest {
    private static final int MAX_FRAME = 64;

    /** Parks for a minute per idle step unless told to stop: stands for a back-off deep in its longest park. */
    private static final class ParkLong implements IdleStrategy {
        volatile boolean stop;

        @Override
        public void idle(final int workCount) {
            if (workCount <= 0) {
                idle();
            }
        }

        @Override
        public void idle() {
            if (!stop) {
                LockSupport.parkNanos(TimeUnit.MINUTES.toNanos(1));
            }
        }

        @Override
        public void reset() {
            // no state
        }
    }

    /** Counts its idle steps, and parks for {@code parkNs} in each (none for 0). */
    private static final class CountingPark implements IdleStrategy {
        private final AtomicInteger parks = new AtomicInteger();
        private final long parkNs;

        CountingPark(final long parkNs) {
            this.parkNs = parkNs;
        }

        int get() {
            return parks.get();
        }

        @Override
        public void idle(final int workCount) {
            if (workCount <= 0) {
                idle();
            }
        }

        @Override
        public void idle() {
            parks.incrementAndGet();
            if (parkNs > 0) {
                LockSupport.parkNanos(parkNs);
            }
        }

        @Override
        public void reset() {
            // counts only
        }
    }

    /** Sleeps a minute per call unless woken (a wake before the sleep ends it at once, as an eventfd's would). */
    private static final class MinuteSleeper implements IdleSleeper {
        final Semaphore wakes = new Semaphore(0);
        final AtomicInteger sleeps = new AtomicInteger();
        volatile boolean sleeping;
        volatile boolean closed;
        volatile long lastTimeoutMs;
        volatile int handles;

        @Override
        public int sleep(final long timeoutMs) {
            if (closed) {
                return CLOSED;
            }
            lastTimeoutMs = timeoutMs;
            sleeps.incrementAndGet();
            if (handles > 0) {
                return handles;
            }
            sleeping = true;
            try {
                if (wakes.tryAcquire(1, TimeUnit.MINUTES)) {
                    wakes.drainPermits();
                }
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            } finally {
                sleeping = false;
            }
            return 0;
        }

        @Override
        public void wake() {
            wakes.release();
        }
    }

    /**
     * {@code SHARED} with a transport's sleeper: the shared thread sleeps in it instead of parking (here a sleep lasts a
     * minute unless woken), and work handed over from another thread ends the sleep: a message handed to the ring, a
     * command to the shared agent (a new agent to host). While a message waits in the ring for a subscriber's demand
     * (nothing wakes the thread for a request) it parks instead, briefly, so the request is seen.
     */
    @Test
    void workFromOtherThreadsEndsTheSharedThreadsSleepInTheTransportsSleeper() {
        final Topic<Long> topic = Topic.of("wake", TestCodecs.LONG, Delivery.RELIABLE);
        final List<Throwable> errors = new CopyOnWriteArrayList<>();
        final CountingPark parks = new CountingPark(TimeUnit.MILLISECONDS.toNanos(1));
        final WakeableIdleStrategy idle = new WakeableIdleStrategy(parks, 0);
        final SharedAgent shared = new SharedAgent("sleep-shared", false, errors::add, idle);
        final MinuteSleeper sleeper = new MinuteSleeper();
        assertNotNull(shared.idleIn(sleeper), "a SHARED host sleeps in the sleeper");
        assertNull(shared.idleIn(new MinuteSleeper()), "one sleeper per host");
        final DeliveryAgent deliveryAgent = new DeliveryAgent("sleep-test", idle::wake);
        idle.parkWhile(deliveryAgent::waitsForDemand);
        final var channel = new SubscriptionChannel<>(topic, SubscribeOptions.<Long>defaults(), MAX_FRAME, null,
            shared.host(deliveryAgent), idle, true);
        channel.transportSubscription = () -> { };
        deliveryAgent.add(channel);
        final List<Long> received = new CopyOnWriteArrayList<>();
        final reactor.core.publisher.BaseSubscriber<Received<Long>> subscriber = new reactor.core.publisher.BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(final org.reactivestreams.Subscription subscription) {
                // no demand yet: the first message waits in the ring
            }

            @Override
            protected void hookOnNext(final Received<Long> value) {
                received.add(value.value());
            }
        };
        Flux.<Received<Long>>push(sink -> channel.sink = sink, FluxSink.OverflowStrategy.ERROR).subscribe(subscriber);
        final AgentRunner runner = new AgentRunner(idle, errors::add, null, shared);
        final Thread sharedThread = new Thread(runner, "sleep-shared");
        sharedThread.start();
        try {
            final UnsafeBuffer frame = new UnsafeBuffer(new byte[MAX_FRAME]);
            awaitSleeping(sleeper);
            FrameHeader.write(frame, 0, FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, topic.topicId(), 1, 0, 1L);
            frame.putLong(FrameHeader.LENGTH, 100);
            assertEquals(SubscriptionSink.CONTINUE, channel.onFrame(frame, 0, FrameHeader.LENGTH + 8)); // into the ring
            final int parked = parks.get();
            Awaitility.await("the shared thread parks while the message waits for demand").until(() -> parks.get() > parked + 2);
            subscriber.request(1);
            Awaitility.await("the message delivered once a park's end found the request").until(() -> received.size() == 1);
            awaitSleeping(sleeper);
            final AtomicInteger started = new AtomicInteger();
            shared.host(new org.agrona.concurrent.Agent() {
                @Override
                public void onStart() {
                    started.incrementAndGet();
                }

                @Override
                public int doWork() {
                    return 0;
                }

                @Override
                public String roleName() {
                    return "late-agent";
                }
            });
            Awaitility.await("a hosted agent started once the command woke the shared thread").until(() -> started.get() == 1);
            awaitSleeping(sleeper);
            subscriber.request(1);
            awaitSleeping(sleeper);
            frame.putLong(FrameHeader.LENGTH, 101);
            FrameHeader.write(frame, 0, FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, topic.topicId(), 1, 1, 1L);
            assertEquals(SubscriptionSink.CONTINUE, channel.onFrame(frame, 0, FrameHeader.LENGTH + 8)); // into the ring, and a wake
            Awaitility.await("the message delivered by the woken shared thread").until(() -> received.size() == 2);
            assertEquals(List.of(100L, 101L), received);
            assertEquals(WakeableIdleStrategy.SLEEP_BOUND_MS, sleeper.lastTimeoutMs);
        } finally {
            sleeper.closed = true;
            sleeper.wake();
            runner.close();
        }
        assertEquals(List.of(), errors);
    }

    /**
     * With a sleeper the thread runs one more duty cycle after it announces itself, then sleeps; a sleep that handled
     * work starts the spins over; a closed sleeper hands the parking phase back to the configured strategy.
     */
    @Test
    void theFirstSleepFollowsOneMoreCycleAndAClosedSleeperGivesTheParksBack() {
        final int spinsAndYields = 2;
        final CountingPark parks = new CountingPark(0);
        final WakeableIdleStrategy idle = new WakeableIdleStrategy(parks, spinsAndYields, 0);
        final MinuteSleeper sleeper = new MinuteSleeper();
        sleeper.handles = 1; // returns at once, as if it handled a completion while arming
        assertTrue(idle.sleepIn(sleeper));
        for (int i = 0; i < spinsAndYields; i++) {
            idle.idle(0);
        }
        assertEquals(spinsAndYields, parks.get(), "spins and yields go to the configured strategy");
        idle.idle(0);
        assertSame(Thread.currentThread(), idle.announced());
        assertEquals(0, sleeper.sleeps.get(), "the announcement is followed by one more cycle, not a sleep");
        idle.idle(0);
        assertEquals(1, sleeper.sleeps.get(), "then it sleeps");
        assertNull(idle.announced(), "the sleep handled work: the idle spell starts over");
        for (int i = 0; i < spinsAndYields + 1; i++) {
            idle.idle(0);
        }
        assertEquals(1, sleeper.sleeps.get());
        sleeper.closed = true;
        idle.idle(0); // the closed sleeper says so
        idle.idle(0);
        assertEquals(2 * spinsAndYields + 1, parks.get(), "after the sleeper closed, the parking phase parks");
    }

    /** With a sleeper the parking phase parks for {@link WakeableIdleStrategy#PARK_BEFORE_SLEEP_NS} before it sleeps. */
    @Test
    void theParkingPhaseParksForItsWindowBeforeItSleeps() {
        final CountingPark parks = new CountingPark(0);
        final long windowNs = TimeUnit.MILLISECONDS.toNanos(20);
        final WakeableIdleStrategy idle = new WakeableIdleStrategy(parks, 0, windowNs);
        final MinuteSleeper sleeper = new MinuteSleeper();
        sleeper.handles = 1;
        assertTrue(idle.sleepIn(sleeper));
        final long start = System.nanoTime();
        while (sleeper.sleeps.get() == 0) {
            idle.idle(0);
        }
        final long tookNs = System.nanoTime() - start;
        assertTrue(tookNs >= windowNs, "slept " + TimeUnit.NANOSECONDS.toMicros(tookNs) + " us into the parking phase, before its 20 ms");
        assertTrue(parks.get() > 0, "parked before");
    }

    @Test
    void aMessageFromAReceiveThreadWakesTheParkedSharedThread() {
        final Topic<Long> topic = Topic.of("wake", TestCodecs.LONG, Delivery.RELIABLE);
        final List<Throwable> errors = new CopyOnWriteArrayList<>();
        final ParkLong park = new ParkLong();
        final WakeableIdleStrategy idle = new WakeableIdleStrategy(park);
        final SharedAgent shared = new SharedAgent("wake-shared", false, errors::add, idle);
        final DeliveryAgent deliveryAgent = new DeliveryAgent("wake-test", idle::wake);
        final var channel = new SubscriptionChannel<>(topic, SubscribeOptions.<Long>defaults(), MAX_FRAME, null,
            shared.host(deliveryAgent), idle, true); // SHARED: the test thread carries no NonBlocking marker, so the ring
        channel.transportSubscription = () -> { };
        deliveryAgent.add(channel);
        final List<Long> received = new CopyOnWriteArrayList<>();
        Flux.<Received<Long>>push(sink -> channel.sink = sink, FluxSink.OverflowStrategy.ERROR)
            .subscribe(r -> received.add(r.value()));
        final AgentRunner runner = new AgentRunner(idle, errors::add, null, shared);
        final Thread sharedThread = new Thread(runner, "wake-shared");
        sharedThread.start();
        try {
            final UnsafeBuffer frame = new UnsafeBuffer(new byte[MAX_FRAME]);
            for (int i = 0; i < 3; i++) {
                awaitParked(sharedThread);
                FrameHeader.write(frame, 0, FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, topic.topicId(), 1, i, 1L);
                frame.putLong(FrameHeader.LENGTH, 100 + i);
                assertEquals(SubscriptionSink.CONTINUE, channel.onFrame(frame, 0, FrameHeader.LENGTH + 8)); // on the test thread
                final int expected = i + 1;
                Awaitility.await("message " + i + " delivered by the woken shared thread").until(() -> received.size() == expected);
            }
            assertEquals(List.of(100L, 101L, 102L), received);
        } finally {
            park.stop = true;
            LockSupport.unpark(sharedThread);
            runner.close();
        }
        assertEquals(List.of(), errors);
    }

    /**
     * The agent's thread announces itself only for its parks: not while the strategy spins or yields, so producers'
     * {@code wake()} on every message reads a field nobody writes; a waker takes the announcement, the next idle step
     * of the parking phase makes it again, and work withdraws it.
     */
    @Test
    void theThreadIsAnnouncedOnlyFromTheParkingPhaseOnAndAWakerTakesIt() {
        final int spinsAndYields = 3;
        final WakeableIdleStrategy idle = new WakeableIdleStrategy(new NoOpIdleStrategy(), spinsAndYields);
        final Thread me = Thread.currentThread();
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < spinsAndYields; i++) {
                idle.idle(0);
                assertNull(idle.announced(), "empty cycle " + (i + 1) + " of round " + round + " is a spin or a yield: not announced");
            }
            idle.idle(0);
            assertSame(me, idle.announced(), "the first idle step of the parking phase announces the thread");
            idle.wake();
            assertNull(idle.announced(), "the waker took the announcement");
            idle.wake(); // nothing to take: no second unpark
            idle.idle(0);
            assertSame(me, idle.announced(), "the next park of the same idle spell announces it again");
            idle.idle(1);
            assertNull(idle.announced(), "work withdraws it, and the count of empty cycles starts over");
        }
    }

    @Test
    void eachStrategyIsAnnouncedFromItsFirstPossiblePark() {
        assertEquals(WakeableIdleStrategy.NEVER, WakeableIdleStrategy.emptyIdlesBeforePark(new BusySpinIdleStrategy()));
        assertEquals(WakeableIdleStrategy.NEVER, WakeableIdleStrategy.emptyIdlesBeforePark(new YieldingIdleStrategy()));
        assertEquals(WakeableIdleStrategy.NEVER, WakeableIdleStrategy.emptyIdlesBeforePark(new NoOpIdleStrategy()));
        assertEquals(0, WakeableIdleStrategy.emptyIdlesBeforePark(new SleepingMillisIdleStrategy(1)));
        assertEquals(IdleStrategies.BACKOFF_MAX_SPINS + IdleStrategies.BACKOFF_MAX_YIELDS,
            WakeableIdleStrategy.emptyIdlesBeforePark(IdleStrategies.supplier("backoff").get()));
        final WakeableIdleStrategy spinning = new WakeableIdleStrategy(new NoOpIdleStrategy(), WakeableIdleStrategy.NEVER);
        for (int i = 0; i < 1_000; i++) {
            spinning.idle(0);
        }
        assertNull(spinning.announced(), "a strategy that never parks is never announced");
    }

    private static void awaitSleeping(final MinuteSleeper sleeper) {
        Awaitility.await("the shared thread sleeps in the sleeper").until(() -> sleeper.sleeping);
    }

    private static void awaitParked(final Thread thread) {
        Awaitility.await("the shared thread parks in its idle strategy").until(() -> thread.getState() == Thread.State.TIMED_WAITING);
    }
}
