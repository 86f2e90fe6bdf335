package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import io.rdmabus.Delivery;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.SubscriptionSink;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.subscriber.TestSubscriber;

/**
 * {@link SubscriptionSink#onValidatedFrame}, the sink call of a transport that validated the header itself: the bus
 * applies everything but the header validation, and its verdict says whether the frame entered its session's stream
 * ({@code CONTINUE}) or was consumed without (a duplicate, a suspect jump, another topic's id: {@code DROPPED}), so the
 * transport derives no stream state (a RELIABLE resume point) from a frame the bus dropped. {@link SubscriptionSink#onFrame}
 * answers {@code CONTINUE} for all of those, as before.
 */
class ValidatedFrameTest {
    private static final int MAX_FRAME = 64;
    private static final long FORGED = 1L << 60;
    private static final Scheduler.Worker INLINE = Schedulers.immediate().createWorker();
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[256]);

    private record Harness(Topic<Long> topic, SubscriptionChannel<Long> channel, TestSubscriber<Received<Long>> subscriber) {
        List<Long> delivered() {
            channel.deliver();
            return subscriber.getReceivedOnNext().stream().map(Received::value).toList();
        }
    }

    private static Harness harness(final Delivery delivery, final int ringSize) {
        final Topic<Long> topic = Topic.of("validated." + delivery, TestCodecs.LONG, delivery);
        final var channel = new SubscriptionChannel<>(topic, SubscribeOptions.<Long>defaults().withRingSize(ringSize), MAX_FRAME, INLINE);
        final TestSubscriber<Received<Long>> subscriber = TestSubscriber.create();
        Flux.<Received<Long>>create(sink -> channel.sink = sink, FluxSink.OverflowStrategy.ERROR).subscribe(subscriber);
        return new Harness(topic, channel, subscriber);
    }

    private int offerValidated(final Harness h, final int topicId, final long sequence) {
        write(topicId, sequence);
        return h.channel().onValidatedFrame(frame, 0, FrameHeader.LENGTH + 8);
    }

    private int offer(final Harness h, final int topicId, final long sequence) {
        write(topicId, sequence);
        return h.channel().onFrame(frame, 0, FrameHeader.LENGTH + 8);
    }

    private void write(final int topicId, final long sequence) {
        FrameHeader.write(frame, 0, FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, topicId, 7, sequence, 1L);
        frame.putLong(FrameHeader.LENGTH, sequence);
    }

    @Test
    void theVerdictSaysWhetherTheStreamTookTheFrame() {
        final Harness h = harness(Delivery.RELIABLE, 64);
        final int id = h.topic().topicId();
        assertEquals(SubscriptionSink.CONTINUE, offerValidated(h, id, 0), "the session's first frame");
        assertEquals(SubscriptionSink.CONTINUE, offerValidated(h, id, 1), "in order");
        assertEquals(SubscriptionSink.DROPPED, offerValidated(h, id, 1), "a duplicate");
        assertEquals(SubscriptionSink.DROPPED, offerValidated(h, id, FORGED), "a RELIABLE jump is a suspect, held back");
        assertEquals(SubscriptionSink.CONTINUE, offerValidated(h, id, 2), "the expected frame refutes the suspect");
        assertEquals(SubscriptionSink.DROPPED, offerValidated(h, id ^ 1, 3), "another topic's id");
        assertEquals(SubscriptionSink.DROPPED, offerValidated(h, id, 10), "a second jump, held back");
        assertEquals(SubscriptionSink.CONTINUE, offerValidated(h, id, 11), "the jump's next frame confirms it: taken, 3..10 lost");
        assertEquals(List.of(0L, 1L, 2L, 11L), h.delivered());
        final SubscriptionStats stats = h.channel().stats();
        assertEquals(List.of(4L, 2L, 1L), List.of(stats.framesReceived(), stats.malformedFrames(), stats.duplicates()),
            "framesReceived, malformedFrames (the refuted suspect, the foreign topic id), duplicates: " + stats);
    }

    @Test
    void onFrameStillAnswersContinueForEveryConsumedFrame() {
        final Harness h = harness(Delivery.RELIABLE, 64);
        final int id = h.topic().topicId();
        assertEquals(SubscriptionSink.CONTINUE, offer(h, id, 0));
        assertEquals(SubscriptionSink.CONTINUE, offer(h, id, 0), "a duplicate");
        assertEquals(SubscriptionSink.CONTINUE, offer(h, id, FORGED), "a suspect");
        assertEquals(SubscriptionSink.CONTINUE, offer(h, id ^ 1, 1), "another topic's id");
        assertEquals(List.of(0L), h.delivered());
    }

    @Test
    void aFullRingBackPressuresAReliableFrameAndNothingMoves() {
        final Harness h = harness(Delivery.RELIABLE, 2);
        final int id = h.topic().topicId();
        int s = 0;
        int verdict;
        while ((verdict = offerValidated(h, id, s)) == SubscriptionSink.CONTINUE) {
            s++;
        }
        assertEquals(SubscriptionSink.BACK_PRESSURE, verdict, "the ring filled (" + s + " frames taken)");
        assertEquals(s, h.channel().stats().framesReceived(), "a back-pressured frame is not counted");
        h.delivered();
        assertEquals(SubscriptionSink.CONTINUE, offerValidated(h, id, s), "offered again once the ring drained");
    }

    @Test
    void aClosedSubscriptionTakesNothing() {
        final Harness h = harness(Delivery.BEST_EFFORT, 64);
        h.channel().closed = true;
        assertEquals(SubscriptionSink.DROPPED, offerValidated(h, h.topic().topicId(), 0));
        assertEquals(SubscriptionSink.CONTINUE, offer(h, h.topic().topicId(), 0));
    }
}
