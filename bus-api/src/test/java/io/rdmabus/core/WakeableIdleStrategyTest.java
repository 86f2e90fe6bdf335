package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.Delivery;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.SubscriptionSink;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;
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

    private static void awaitParked(final Thread thread) {
        Awaitility.await("the shared thread parks in its idle strategy").until(() -> thread.getState() == Thread.State.TIMED_WAITING);
    }
}
