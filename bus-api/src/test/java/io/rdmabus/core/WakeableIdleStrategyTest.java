package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.Delivery;
import io.rdmabus.IdleStrategies;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.frame.FrameHeader;
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

    @Test
    void aMessageFromAReceiveThreadWakesTheParkedSharedThread() {
        final Topic<Long> topic = Topic.of("wake", TestCodecs.LONG, Delivery.RELIABLE);
        final List<Throwable> errors = new CopyOnWriteArrayList<>();
        final ParkLong park = new ParkLong();
        final WakeableIdleStrategy idle = new WakeableIdleStrategy(park);
        final SharedAgent shared = new SharedAgent("wake-shared", false, errors::add);
        final DeliveryAgent deliveryAgent = new DeliveryAgent("wake-test");
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

    private static void awaitParked(final Thread thread) {
        Awaitility.await("the shared thread parks in its idle strategy").until(() -> thread.getState() == Thread.State.TIMED_WAITING);
    }
}
