package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.subscriber.TestSubscriber;

/**
 * The receive side's sequence rule (docs/wire-format.md, "Sequence rule"), branch by branch, driven frame by frame on the
 * test thread: in order, behind (duplicate), a BEST_EFFORT gap within {@link FrameHeader#BEST_EFFORT_GAP_BOUND}, and a
 * suspect jump (any RELIABLE jump, a BEST_EFFORT one beyond the bound) that the session's next frame confirms (it is the
 * suspect + 1: a gap) or refutes (the suspect was corrupt: malformed).
 */
class SequenceRuleTest {
    private static final int MAX_FRAME = 64;
    private static final int CHUNK = MAX_FRAME - FrameHeader.LENGTH;
    private static final long FORGED = 1L << 60;
    private static final long BOUND = FrameHeader.BEST_EFFORT_GAP_BOUND;
    /** Unused by back-pressure subscriptions (every subscription here), required by the constructor's contract. */
    private static final Scheduler.Worker INLINE = Schedulers.immediate().createWorker();
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[256]);

    /** A channel with an unbounded subscriber attached; {@link #delivered()} drains the ring on the test thread. */
    private record Harness<T>(Topic<T> topic, SubscriptionChannel<T> channel, TestSubscriber<Received<T>> subscriber) {
        List<Received<T>> delivered() {
            channel.deliver();
            return subscriber.getReceivedOnNext();
        }

        SubscriptionStats stats() {
            return channel.stats();
        }
    }

    private static <T> Harness<T> harness(final Topic<T> topic, final int ringSize) {
        final var channel = new SubscriptionChannel<>(topic, SubscribeOptions.<T>defaults().withRingSize(ringSize), MAX_FRAME, INLINE);
        final TestSubscriber<Received<T>> subscriber = TestSubscriber.create();
        Flux.<Received<T>>create(sink -> channel.sink = sink, FluxSink.OverflowStrategy.ERROR).subscribe(subscriber);
        return new Harness<>(topic, channel, subscriber);
    }

    private static Harness<Long> longs(final Delivery delivery) {
        return harness(Topic.of("seq." + delivery, TestCodecs.LONG, delivery), 64);
    }

    private static Harness<byte[]> bytes() {
        return harness(Topic.of("seq.bytes", TestCodecs.BYTES, Delivery.RELIABLE).withMaxMessageLength(4 * CHUNK), 64);
    }

    /** Offers an unfragmented frame whose value is its sequence. @return what onFrame answered */
    private int send(final Harness<Long> h, final int session, final long sequence) {
        FrameHeader.write(frame, 0, FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, h.topic().topicId(), session, sequence, 1L);
        frame.putLong(FrameHeader.LENGTH, sequence);
        return h.channel().onFrame(frame, 0, FrameHeader.LENGTH + 8);
    }

    private void sendFragment(final Harness<byte[]> h, final int session, final long sequence, final int flags, final byte[] payload,
                              final int from, final int length) {
        FrameHeader.write(frame, 0, flags, FrameHeader.LENGTH + length, h.topic().topicId(), session, sequence, 1L);
        frame.putBytes(FrameHeader.LENGTH, payload, from, length);
        assertEquals(SubscriptionSink.CONTINUE, h.channel().onFrame(frame, 0, FrameHeader.LENGTH + length));
    }

    /** A message of {@code chunks} full frames, every byte depending on its position and {@code seed}. */
    private static byte[] message(final int chunks, final int seed) {
        final byte[] m = new byte[chunks * CHUNK];
        for (int i = 0; i < m.length; i++) {
            m[i] = (byte) (seed * 31 + i);
        }
        return m;
    }

    private static List<Long> values(final List<Received<Long>> received) {
        return received.stream().map(Received::value).toList();
    }

    private static List<Long> lostBefore(final List<Received<Long>> received) {
        return received.stream().map(Received::lostBefore).toList();
    }

    private static void assertCounts(final SubscriptionStats stats, final long framesReceived, final long malformed, final long gaps,
                                     final long duplicates) {
        assertEquals(List.of(framesReceived, malformed, gaps, duplicates),
            List.of(stats.framesReceived(), stats.malformedFrames(), stats.gapMessages(), stats.duplicates()),
            "framesReceived, malformedFrames, gapMessages, duplicates: " + stats);
    }

    /**
     * Sessions beyond {@link FrameReceiver#MAX_SESSIONS} make the subscription forget the half idle longest, never an
     * active one: a session that keeps sending keeps its expectation (a replayed frame is still a duplicate), while a
     * forgotten one that sends again starts over (its old first frame is delivered again).
     */
    @Test
    void beyondMaxSessionsTheIdleLongestAreForgottenAndAnActiveSessionKeepsItsState() {
        final Harness<Long> h = longs(Delivery.RELIABLE);
        final int active = 1;
        send(h, active, 0);
        final int flood = FrameReceiver.MAX_SESSIONS + 100;
        for (int i = 0; i < flood; i++) {
            assertEquals(SubscriptionSink.CONTINUE, send(h, 1_000 + i, 0));
            if (i % 500 == 0) {
                send(h, active, i / 500 + 1); // the active session goes on sending
            }
            h.channel().deliver();
        }
        assertTrue(h.channel().sessionCount() <= FrameReceiver.MAX_SESSIONS, "sessions remembered: " + h.channel().sessionCount());
        final long[] counters = new long[io.rdmabus.counters.CountersFile.SUBSCRIPTION_COUNTERS.size()];
        h.channel().sampleCounters(counters);
        assertEquals(flood + 1L - h.channel().sessionCount(),
            counters[io.rdmabus.counters.CountersFile.SUBSCRIPTION_COUNTERS.indexOf("sessionsForgotten")], "counter sessionsForgotten");
        final long next = flood / 500 + 1;
        final long duplicatesBefore = h.stats().duplicates();
        send(h, active, next - 1); // a replay of the active session's last frame
        assertEquals(duplicatesBefore + 1, h.stats().duplicates(), "the active session was forgotten: its replayed frame was not a duplicate");
        final int deliveredBefore = h.delivered().size();
        send(h, 1_000, 0); // the first flooded session, idle longest: forgotten, so its frame 0 is new again
        assertEquals(deliveredBefore + 1, h.delivered().size(), "the session idle longest was not forgotten");
        assertEquals(0L, h.delivered().get(deliveredBefore).sequence());
    }

    @Test
    void aReliableForgedJumpIsMalformedWhenTheNextFrameIsTheExpectedOne() {
        final Harness<Long> h = longs(Delivery.RELIABLE);
        send(h, 1, 0);
        send(h, 1, 1);
        assertEquals(SubscriptionSink.CONTINUE, send(h, 1, FORGED));
        assertEquals(List.of(0L, 1L), values(h.delivered()), "a suspect is not delivered");
        send(h, 1, 2); // refutes it
        send(h, 1, 3);
        send(h, 1, 4 + 3); // a small forged jump: RELIABLE trusts no jump until the next frame
        send(h, 1, 4);
        final List<Received<Long>> got = h.delivered();
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), values(got));
        assertEquals(List.of(0L, 0L, 0L, 0L, 0L), lostBefore(got));
        assertCounts(h.stats(), 5, 2, 0, 0);
    }

    @Test
    void aReliableJumpConfirmedByTheSuspectPlusOneIsAGapReportedOnThatFrame() {
        final Harness<Long> h = longs(Delivery.RELIABLE);
        send(h, 1, 0);
        send(h, 1, 1);
        send(h, 1, 10); // e.g. the first frame after a reconnect that lost 2..9
        assertCounts(h.stats(), 2, 0, 0, 0);
        send(h, 1, 11);
        send(h, 1, 12);
        final List<Received<Long>> got = h.delivered();
        assertEquals(List.of(0L, 1L, 11L, 12L), values(got));
        assertEquals(List.of(0L, 0L, 9L, 0L), lostBefore(got), "2..9 lost on the wire and 10, the suspect, dropped: 9 frames");
        assertCounts(h.stats(), 4, 0, 9, 0);
    }

    @Test
    void aBestEffortJumpWithinTheBoundIsAGapAtOnce() {
        final Harness<Long> h = longs(Delivery.BEST_EFFORT);
        send(h, 1, 0);
        send(h, 1, 1 + BOUND); // a jump of exactly the bound
        List<Received<Long>> got = h.delivered();
        assertEquals(List.of(0L, 1 + BOUND), values(got), "no later frame is needed");
        assertEquals(List.of(0L, BOUND), lostBefore(got));
        send(h, 1, 2 + BOUND + 1); // and a small one
        got = h.delivered();
        assertEquals(1L, got.get(2).lostBefore());
        assertCounts(h.stats(), 3, 0, BOUND + 1, 0);
    }

    @Test
    void aBestEffortJumpBeyondTheBoundIsMalformedUnlessTheNextFrameConfirmsIt() {
        final Harness<Long> h = longs(Delivery.BEST_EFFORT);
        send(h, 1, 0);
        send(h, 1, 2 + BOUND); // a jump of the bound + 1
        assertEquals(List.of(0L), values(h.delivered()));
        send(h, 1, 1); // refutes it
        assertEquals(List.of(0L, 1L), values(h.delivered()));
        assertCounts(h.stats(), 2, 1, 0, 0);

        send(h, 2, 0);
        send(h, 2, 2 + BOUND);
        send(h, 2, 3 + BOUND); // confirms it
        final List<Received<Long>> got = h.delivered();
        assertEquals(List.of(0L, 1L, 0L, 3 + BOUND), values(got));
        assertEquals(BOUND + 2, got.get(3).lostBefore(), "1 .. bound + 2, the suspect among them");
        assertCounts(h.stats(), 4, 1, BOUND + 2, 0);
    }

    @Test
    void aSuspectReplacedByAnotherIsMalformed() {
        final Harness<Long> h = longs(Delivery.RELIABLE);
        send(h, 1, 0);
        send(h, 1, 100);
        send(h, 1, 200); // replaces 100: malformed
        send(h, 1, 1); // refutes 200: malformed
        assertCounts(h.stats(), 2, 2, 0, 0);

        send(h, 2, 0);
        send(h, 2, 100);
        send(h, 2, 200); // replaces 100: malformed
        send(h, 2, 201); // confirms 200
        final List<Received<Long>> got = h.delivered();
        assertEquals(List.of(0L, 1L, 0L, 201L), values(got));
        assertEquals(List.of(0L, 0L, 0L, 200L), lostBefore(got), "1..200 lost, each once, 100's forged copy not among them twice");
        assertCounts(h.stats(), 4, 3, 200, 0);
    }

    /** A forged frame of any flags between the fragments of a message is refuted by the next fragment and changes nothing. */
    @ParameterizedTest
    @ValueSource(ints = {FrameHeader.FLAG_BEGIN, 0, FrameHeader.FLAG_END, FrameHeader.FLAGS_UNFRAGMENTED})
    void aForgedFrameInsideAFragmentedMessageLeavesItsReassemblyIntact(final int forgedFlags) {
        final Harness<byte[]> h = bytes();
        final byte[] message = message(3, 1);
        final byte[] forged = message(1, 99);
        sendFragment(h, 1, 0, FrameHeader.FLAG_BEGIN, message, 0, CHUNK);
        sendFragment(h, 1, FORGED, forgedFlags, forged, 0, CHUNK);
        sendFragment(h, 1, 1, 0, message, CHUNK, CHUNK);
        sendFragment(h, 1, 2 + 3, forgedFlags, forged, 0, CHUNK); // a near jump, three ahead
        sendFragment(h, 1, 2, FrameHeader.FLAG_END, message, 2 * CHUNK, CHUNK);
        final byte[] next = message(1, 2);
        sendFragment(h, 1, 3, FrameHeader.FLAGS_UNFRAGMENTED, next, 0, CHUNK);
        final List<Received<byte[]>> got = h.delivered();
        assertEquals(2, got.size(), "the message and the next one");
        assertArrayEquals(message, got.get(0).value(), "reassembled across the forged frames");
        assertEquals(0, got.get(0).sequence());
        assertArrayEquals(next, got.get(1).value());
        assertTrue(got.stream().allMatch(r -> r.lostBefore() == 0), "no loss reported");
        assertCounts(h.stats(), 4, 2, 0, 0);
    }

    @Test
    void anAcceptedJumpLosesTheReassemblyInProgressCountedOnceInTheGap() {
        final Harness<byte[]> h = bytes();
        final byte[] broken = message(3, 1);
        sendFragment(h, 1, 0, FrameHeader.FLAG_BEGIN, broken, 0, CHUNK);
        sendFragment(h, 1, 1, 0, broken, CHUNK, CHUNK);
        final byte[] suspect = message(1, 2);
        sendFragment(h, 1, 50, FrameHeader.FLAGS_UNFRAGMENTED, suspect, 0, CHUNK);
        final byte[] after = message(3, 3); // the confirming frame begins a fragmented message
        sendFragment(h, 1, 51, FrameHeader.FLAG_BEGIN, after, 0, CHUNK);
        sendFragment(h, 1, 52, 0, after, CHUNK, CHUNK);
        sendFragment(h, 1, 53, FrameHeader.FLAG_END, after, 2 * CHUNK, CHUNK);
        final List<Received<byte[]>> got = h.delivered();
        assertEquals(1, got.size(), "the broken message is not delivered, the suspect neither");
        assertArrayEquals(after, got.get(0).value());
        assertEquals(51, got.get(0).sequence());
        assertEquals(49, got.get(0).lostBefore(), "2..50: the broken message's tail and the suspect, no extra count for the message");
        assertCounts(h.stats(), 5, 0, 49, 0);
    }

    @Test
    void aSequenceBehindIsADuplicateThatChangesNothingButRefutesASuspect() {
        final Harness<Long> h = longs(Delivery.RELIABLE);
        send(h, 1, 0);
        send(h, 1, 1);
        send(h, 1, 2);
        send(h, 1, 1);
        send(h, 1, 0);
        send(h, 1, 3);
        assertCounts(h.stats(), 4, 0, 0, 2);
        send(h, 1, 100); // a suspect
        send(h, 1, 2); // a duplicate: the suspect is refuted, the expectation (4) stays
        send(h, 1, 4);
        final List<Received<Long>> got = h.delivered();
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), values(got));
        assertTrue(got.stream().allMatch(r -> r.lostBefore() == 0));
        assertCounts(h.stats(), 5, 1, 0, 3);
    }

    @Test
    void framesOfAnotherSessionDoNotDecideASuspect() {
        final Harness<Long> h = longs(Delivery.RELIABLE);
        send(h, 1, 0);
        send(h, 1, 10);
        send(h, 2, 0);
        send(h, 2, 1);
        assertCounts(h.stats(), 3, 0, 0, 0);
        send(h, 1, 11); // confirms session 1's suspect
        final List<Received<Long>> got = h.delivered();
        assertEquals(List.of(0L, 0L, 1L, 11L), values(got));
        assertEquals(10, got.get(3).lostBefore());
        assertCounts(h.stats(), 4, 0, 10, 0);
    }

    /** A frame answered with BACK_PRESSURE is not consumed: it decides no suspect until it is offered again and taken. */
    @Test
    void aBackPressuredFrameDecidesNothingUntilItIsTaken() {
        final Harness<Long> h = harness(Topic.of("seq.bp", TestCodecs.LONG, Delivery.RELIABLE), 4);
        for (long s = 0; s < 4; s++) {
            assertEquals(SubscriptionSink.CONTINUE, send(h, 1, s));
        }
        assertEquals(SubscriptionSink.CONTINUE, send(h, 1, FORGED), "a suspect takes no ring slot");
        assertEquals(SubscriptionSink.BACK_PRESSURE, send(h, 1, 4));
        assertCounts(h.stats(), 4, 0, 0, 0);
        h.delivered();
        assertEquals(SubscriptionSink.CONTINUE, send(h, 1, 4));
        assertCounts(h.stats(), 5, 1, 0, 0);

        for (long s = 5; s < 8; s++) {
            assertEquals(SubscriptionSink.CONTINUE, send(h, 1, s));
        }
        assertEquals(SubscriptionSink.CONTINUE, send(h, 1, 60));
        assertEquals(SubscriptionSink.BACK_PRESSURE, send(h, 1, 61));
        assertCounts(h.stats(), 8, 1, 0, 0);
        h.delivered();
        assertEquals(SubscriptionSink.CONTINUE, send(h, 1, 61));
        final List<Received<Long>> got = h.delivered();
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 61L), values(got));
        assertEquals(53, got.get(8).lostBefore(), "8..60");
        assertCounts(h.stats(), 9, 1, 53, 0);
    }

    /**
     * The rule keeps its state in the session: judging frames (in order, suspect, refuted, duplicate, confirmed) allocates
     * nothing. Only onFrame is measured, in batches of 60 frames; the ring is drained between batches, outside the
     * measurement. A batch may see a one-off allocation of the JVM's own (a deoptimisation re-materialising objects), so
     * the check is that nearly every batch allocated nothing: an allocation per frame would show in every one.
     */
    @Test
    void judgingSequencesAllocatesNothingPerFrame() {
        final Harness<Long> h = harness(Topic.of("seq.alloc", TestCodecs.LONG, Delivery.RELIABLE), 64);
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long next = 0;
        // warm up: every ring slot's buffer grown once, the code compiled, and past the 1000th malformed frame (logged)
        for (int batch = 0; batch < 110; batch++) {
            for (int i = 0; i < 10; i++) {
                next = cycle(h, next);
            }
            h.delivered();
        }
        final List<Long> allocatedPerBatch = new ArrayList<>();
        for (int batch = 0; batch < 50; batch++) {
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 10; i++) {
                next = cycle(h, next);
            }
            allocatedPerBatch.add(threads.getCurrentThreadAllocatedBytes() - before);
            h.delivered();
        }
        assertCounts(h.stats(), 1600 * 3, 1600, 1600 * 6, 1600);
        assertEquals(1600 * 3, h.subscriber().getReceivedOnNext().size());
        assertTrue(allocatedPerBatch.stream().filter(bytes -> bytes > 0).count() <= 5,
            "bytes allocated by each batch of 60 frames judged: " + allocatedPerBatch);
    }

    /** In order, a forged suspect refuted by the next in-order frame, a duplicate, a suspect confirmed (gap 6). @return next */
    private long cycle(final Harness<Long> h, final long first) {
        long next = first;
        send(h, 1, next++);
        send(h, 1, next + FORGED);
        send(h, 1, next++);
        send(h, 1, next - 2);
        send(h, 1, next + 5);
        send(h, 1, next + 6);
        return next + 7;
    }
}
