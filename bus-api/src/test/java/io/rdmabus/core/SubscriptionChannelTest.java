package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Arrays;
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
import org.reactivestreams.Subscription;

import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Pure logic of the receive path (sequencing, reassembly, gap accounting, policies), driven frame by frame on the test
 * thread. Transports themselves are tested by the TCK against real sockets and drivers.
 */
class SubscriptionChannelTest {
    private static final int MAX_FRAME = 64;
    /** Policy subscriptions emit on a worker; inline here so each test sees the emission at once. */
    private static final Scheduler.Worker INLINE = Schedulers.immediate().createWorker();
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[4096]);

    /** Records what the channel delivers; requests only what the test asks for. */
    private static final class Recorder<T> extends BaseSubscriber<Received<T>> {
        final List<Received<T>> received = new ArrayList<>();
        boolean completed;

        @Override
        protected void hookOnSubscribe(final Subscription subscription) {
            // no initial demand
        }

        @Override
        protected void hookOnNext(final Received<T> value) {
            received.add(value);
        }

        @Override
        protected void hookOnComplete() {
            completed = true;
        }
    }

    private static <T> Recorder<T> attach(final SubscriptionChannel<T> channel) {
        final Recorder<T> recorder = new Recorder<>();
        Flux.<Received<T>>create(sink -> channel.sink = sink, FluxSink.OverflowStrategy.ERROR).subscribe(recorder);
        return recorder;
    }

    private int longFrame(final Topic<Long> topic, final int session, final long sequence, final long value) {
        FrameHeader.write(frame, 0, FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, topic.topicId(), session, sequence, 1L);
        frame.putLong(FrameHeader.LENGTH, value);
        return FrameHeader.LENGTH + 8;
    }

    @Test
    void deliversInOrderOnlyAsDemandedAndBackPressuresWhenTheRingIsFull() {
        final Topic<Long> topic = Topic.of("t", TestCodecs.LONG, Delivery.RELIABLE);
        final var channel = new SubscriptionChannel<>(topic, SubscribeOptions.<Long>defaults().withRingSize(4), MAX_FRAME, INLINE);
        final Recorder<Long> recorder = attach(channel);
        for (int i = 0; i < 4; i++) {
            assertEquals(SubscriptionSink.CONTINUE, channel.onFrame(frame, 0, longFrame(topic, 1, i, 100 + i)));
        }
        assertEquals(0, channel.availableCredits());
        assertEquals(SubscriptionSink.BACK_PRESSURE, channel.onFrame(frame, 0, longFrame(topic, 1, 4, 104)));
        assertEquals(0, channel.deliver(), "no demand, nothing delivered");
        recorder.request(2);
        channel.deliver();
        assertEquals(List.of(100L, 101L), recorder.received.stream().map(Received::value).toList());
        assertEquals(SubscriptionSink.CONTINUE, channel.onFrame(frame, 0, longFrame(topic, 1, 4, 104)), "redelivered frame accepted");
        recorder.request(10);
        channel.deliver();
        assertEquals(List.of(100L, 101L, 102L, 103L, 104L), recorder.received.stream().map(Received::value).toList());
        assertTrue(recorder.received.stream().allMatch(r -> r.lostBefore() == 0));
    }

    @Test
    void bestEffortNeverBackPressuresTheTransportButDropsAtAFullRingAndReportsIt() {
        final Topic<Long> topic = Topic.of("t", TestCodecs.LONG, Delivery.BEST_EFFORT);
        final var channel = new SubscriptionChannel<>(topic, SubscribeOptions.<Long>defaults().withRingSize(2), MAX_FRAME, INLINE);
        final Recorder<Long> recorder = attach(channel);
        for (int i = 0; i < 5; i++) {
            assertEquals(SubscriptionSink.CONTINUE, channel.onFrame(frame, 0, longFrame(topic, 1, i, i)));
        }
        recorder.request(10);
        channel.deliver();
        channel.onFrame(frame, 0, longFrame(topic, 1, 5, 5));
        channel.deliver();
        assertEquals(List.of(0L, 1L, 5L), recorder.received.stream().map(Received::value).toList());
        assertEquals(3, recorder.received.get(2).lostBefore());
        assertEquals(3, channel.stats().droppedBySubscriber());
    }

    @Test
    void countsGapsDuplicatesAndMalformedFramesWithoutThrowing() {
        final Topic<Long> topic = Topic.of("t", TestCodecs.LONG, Delivery.BEST_EFFORT);
        final var channel = new SubscriptionChannel<>(topic, SubscribeOptions.<Long>defaults(), MAX_FRAME, INLINE);
        final Recorder<Long> recorder = attach(channel);
        recorder.request(100);
        channel.onFrame(frame, 0, longFrame(topic, 9, 10, 1));   // joins live at 10
        channel.onFrame(frame, 0, longFrame(topic, 9, 13, 2));   // 11, 12 lost
        channel.onFrame(frame, 0, longFrame(topic, 9, 12, 3));   // late: duplicate
        channel.onFrame(frame, 0, longFrame(topic, 9, 0, 4));    // behind
        channel.onFrame(frame, 0, 7);                            // truncated header
        final int len = longFrame(topic, 9, 14, 5);
        frame.putInt(FrameHeader.TOPIC_ID_OFFSET, topic.topicId() + 1);
        channel.onFrame(frame, 0, len);                          // foreign topic
        FrameHeader.write(frame, 0, FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 3, topic.topicId(), 9, 14, 1L);
        channel.onFrame(frame, 0, FrameHeader.LENGTH + 3);       // payload the codec rejects (3 bytes for a long)
        channel.onFrame(frame, 0, longFrame(topic, 9, 15, 6));
        channel.deliver();
        assertEquals(List.of(1L, 2L, 6L), recorder.received.stream().map(Received::value).toList());
        assertEquals(List.of(0L, 2L, 1L), recorder.received.stream().map(Received::lostBefore).toList());
        final SubscriptionStats stats = channel.stats();
        assertEquals(2, stats.gapMessages());
        assertEquals(2, stats.duplicates());
        assertEquals(3, stats.malformedFrames());
        assertEquals(3, stats.messagesDelivered());
    }

    /** A confirmed jump (a suspect followed by its sequence + 1) can be near 2^63: the counter saturates, never wraps. */
    @Test
    void aHugeConfirmedJumpSaturatesTheGapCounterInsteadOfWrappingIt() {
        final Topic<Long> topic = Topic.of("t", TestCodecs.LONG, Delivery.BEST_EFFORT);
        final var channel = new SubscriptionChannel<>(topic, SubscribeOptions.<Long>defaults(), MAX_FRAME, INLINE);
        final Recorder<Long> recorder = attach(channel);
        recorder.request(100);
        channel.onFrame(frame, 0, longFrame(topic, 9, 0, 1));
        channel.onFrame(frame, 0, longFrame(topic, 9, Long.MAX_VALUE - 2, 2)); // a suspect jump
        channel.onFrame(frame, 0, longFrame(topic, 9, Long.MAX_VALUE - 1, 3)); // confirms it: a gap of 2^63 - 3
        channel.onFrame(frame, 0, longFrame(topic, 10, 0, 4));
        channel.onFrame(frame, 0, longFrame(topic, 10, Long.MAX_VALUE / 2, 5));
        channel.onFrame(frame, 0, longFrame(topic, 10, Long.MAX_VALUE / 2 + 1, 6)); // another session's huge gap on top
        channel.deliver();
        assertEquals(List.of(1L, 3L, 4L, 6L), recorder.received.stream().map(Received::value).toList());
        assertEquals(Long.MAX_VALUE, channel.stats().gapMessages());
        assertEquals(Long.MAX_VALUE - 2, recorder.received.get(1).lostBefore());
        assertEquals(0, channel.stats().malformedFrames());
    }

    @Test
    void reassemblesFragmentsAndReportsAMessageWhoseMiddleWasLost() {
        final Topic<byte[]> topic = Topic.of("big", TestCodecs.BYTES, Delivery.RELIABLE);
        final var channel = new SubscriptionChannel<>(topic, SubscribeOptions.<byte[]>defaults(), MAX_FRAME, INLINE);
        final Recorder<byte[]> recorder = attach(channel);
        recorder.request(10);
        final byte[] message = new byte[70];
        Arrays.fill(message, (byte) 'x');
        message[0] = 'a';
        message[69] = 'z';
        long seq = 0;
        seq = sendFragments(topic, channel, message, seq, -1);
        sendFragments(topic, channel, message, seq, 1);   // middle fragment lost
        seq += 3;
        sendFragments(topic, channel, new byte[] {1, 2, 3}, seq, -1);
        channel.deliver();
        assertEquals(2, recorder.received.size());
        assertTrue(Arrays.equals(message, recorder.received.get(0).value()));
        assertEquals(0, recorder.received.get(0).sequence());
        assertTrue(Arrays.equals(new byte[] {1, 2, 3}, recorder.received.get(1).value()));
        // reported lost: frame 4 (the lost middle) and frame 5 (its END, dropped as a suspect jump until frame 6 confirmed it)
        assertEquals(2, recorder.received.get(1).lostBefore(), "the broken message is reported lost");
        assertEquals(2, channel.stats().gapMessages());
        assertEquals(0, channel.stats().malformedFrames());
    }

    /** Splits into 32-byte payload fragments; skips fragment index {@code skip}. @return next sequence */
    private long sendFragments(final Topic<byte[]> topic, final SubscriptionChannel<byte[]> channel, final byte[] message,
                               final long firstSequence, final int skip) {
        final int chunk = MAX_FRAME - FrameHeader.LENGTH;
        long seq = firstSequence;
        for (int off = 0, index = 0; off < message.length; off += chunk, index++, seq++) {
            final int n = Math.min(chunk, message.length - off);
            final int flags = (off == 0 ? FrameHeader.FLAG_BEGIN : 0) | (off + n == message.length ? FrameHeader.FLAG_END : 0);
            FrameHeader.write(frame, 0, flags, FrameHeader.LENGTH + n, topic.topicId(), 3, seq, 5L);
            frame.putBytes(FrameHeader.LENGTH, message, off, n);
            if (index != skip) {
                channel.onFrame(frame, 0, FrameHeader.LENGTH + n);
            }
        }
        return seq;
    }

    @Test
    void dropOldestKeepsTheNewestAndReportsWhatItDropped() {
        final Topic<Long> topic = Topic.of("t", TestCodecs.LONG, Delivery.BEST_EFFORT);
        final var channel = new SubscriptionChannel<>(topic, SubscribeOptions.<Long>dropOldest(2), MAX_FRAME, INLINE);
        final Recorder<Long> recorder = attach(channel);
        for (int i = 0; i < 5; i++) {
            channel.onFrame(frame, 0, longFrame(topic, 1, i, i));
        }
        channel.deliver();
        recorder.request(10);
        channel.deliver();
        assertEquals(List.of(3L, 4L), recorder.received.stream().map(Received::value).toList());
        assertEquals(3, recorder.received.get(0).lostBefore());
        assertEquals(3, channel.stats().droppedBySubscriber());
    }

    @Test
    void conflationKeepsTheLatestPerKey() {
        final Topic<Long> topic = Topic.of("t", TestCodecs.LONG, Delivery.BEST_EFFORT);
        final var channel = new SubscriptionChannel<>(topic, SubscribeOptions.<Long>conflateLatest(v -> v % 2), MAX_FRAME, INLINE);
        final Recorder<Long> recorder = attach(channel);
        for (int i = 0; i < 6; i++) {
            channel.onFrame(frame, 0, longFrame(topic, 1, i, i));
        }
        channel.deliver();
        recorder.request(10);
        channel.deliver();
        assertEquals(List.of(4L, 5L), recorder.received.stream().map(Received::value).toList());
        assertEquals(4, channel.stats().droppedBySubscriber());
        channel.complete();
        assertTrue(recorder.completed);
    }

    /**
     * A ring slot's buffer is on the heap: a direct buffer per slot was a JDK cleaner per slot (1024 per default
     * subscription), which the Reference Handler runs one by one at the GC that finds the ring dead, and under
     * emulation that kept RS TCK rule 3.13's reference from being enqueued within its 100 ms (docs/rdma-transport-history.md, "RS rule 3.13").
     */
    @Test
    void aDefaultRingTakesNoDirectBufferPerSlot() {
        final long before = directBuffers();
        final var channel = new SubscriptionChannel<>(Topic.of("t", TestCodecs.LONG, Delivery.RELIABLE), SubscribeOptions.<Long>defaults(),
            MAX_FRAME, INLINE);
        final long added = directBuffers() - before;
        assertTrue(added < 16, "a ring of " + SubscribeOptions.DEFAULT_RING_SIZE + " slots allocated " + added + " direct buffers");
        Reference.reachabilityFence(channel);
    }

    private static long directBuffers() {
        return ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream().filter(p -> "direct".equals(p.getName()))
            .mapToLong(BufferPoolMXBean::getCount).sum();
    }
}
