package io.rdmabus.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongSupplier;

import io.rdmabus.Bus;
import io.rdmabus.Delivery;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportPublication;

import org.agrona.concurrent.UnsafeBuffer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The kit's cases on hostile input: frames injected through a raw transport publication
 * ({@link TckFixture#newRawTransport()}) between the frames of a valid session, as a corrupt or hostile sender could:
 * malformed headers and payloads, and forged sequence numbers. Whatever arrives, the valid session's frames are
 * delivered exactly, every rejected frame is counted once where {@code docs/wire-format.md} says, and the subscriber
 * never sees an error or completion. Run by every transport through {@link TransportTck}, which extends this class.
 */
public abstract class HostileFrameTck extends TckBase {
    private static final int WHOLE = FrameHeader.FLAGS_UNFRAGMENTED;

    HostileFrameTck() {
    }

    /**
     * Garbage frames injected through a raw transport publication between valid ones (truncated header, wrong version,
     * unknown type, unknown flags, length mismatch, foreign topic id, a valid header over a payload the codec rejects) are
     * dropped and counted as malformed; the subscriber gets exactly the valid frames, in order, with no reported loss and
     * no error.
     */
    @Test
    @ScaledTimeout(30)
    void malformedFramesAreDroppedAndCounted() throws InterruptedException {
        final Bus subBus = bus("sub");
        final Topic<String> topic = topic("malformed", Delivery.RELIABLE);
        final Recorder<String> rec = subscribe(subBus, topic, SubscribeOptions.defaults());
        final Transport raw = fixture.newRawTransport();
        toClose.add(raw);
        final TransportPublication pub = raw.addPublication(topic.descriptor());
        toClose.add(pub);

        final int probeSession = 0x7e57_0001;
        final int validSession = 0x7e57_0002;
        final int badPayloadSession = 0x7e57_0003;
        final long deadlineNs = System.nanoTime() + connectTimeout.toNanos();
        long probeSequence = 0;
        while (rec.count() == 0) {
            assertTrue(System.nanoTime() < deadlineNs, "no probe frame from the raw transport reached the subscriber");
            inject(pub, frame(topic.topicId(), FrameHeader.FLAGS_UNFRAGMENTED, probeSession, probeSequence++, PROBE));
            rec.awaitCount(1, Duration.ofMillis(50));
        }
        final int probesSeen = rec.count();

        long seq = 0;
        final List<String> expected = new ArrayList<>();
        final List<byte[]> garbage = new ArrayList<>();
        final byte[] truncated = Arrays.copyOf(frame(topic.topicId(), FrameHeader.FLAGS_UNFRAGMENTED, validSession, 1, "x"), 12);
        garbage.add(truncated);
        final byte[] version = frame(topic.topicId(), FrameHeader.FLAGS_UNFRAGMENTED, validSession, 1, "bad-version");
        version[FrameHeader.VERSION_OFFSET] = 2;
        garbage.add(version);
        final byte[] type = frame(topic.topicId(), FrameHeader.FLAGS_UNFRAGMENTED, validSession, 1, "bad-type");
        type[FrameHeader.TYPE_OFFSET] = 9;
        garbage.add(type);
        garbage.add(frame(topic.topicId(), 0x01, validSession, 1, "bad-flags"));
        final byte[] length = frame(topic.topicId(), FrameHeader.FLAGS_UNFRAGMENTED, validSession, 1, "bad-length");
        new UnsafeBuffer(length).putInt(FrameHeader.FRAME_LENGTH_OFFSET, length.length + 8, java.nio.ByteOrder.LITTLE_ENDIAN);
        garbage.add(length);
        garbage.add(frame(topic.topicId() ^ 0x5A5A5A5A, FrameHeader.FLAGS_UNFRAGMENTED, validSession, 1, "foreign-topic"));
        // a well-formed header over bytes that are not UTF-8 (its own session, so the valid session sees no loss)
        garbage.add(frame(topic.topicId(), FrameHeader.FLAGS_UNFRAGMENTED, badPayloadSession, 0, new byte[] {(byte) 0xC3, 0x28}));

        for (final byte[] bad : garbage) {
            final String v = "v" + seq;
            expected.add(v);
            inject(pub, frame(topic.topicId(), FrameHeader.FLAGS_UNFRAGMENTED, validSession, seq++, v));
            // garbage of the valid session claims its next sequence: a rejected frame must not advance it
            if (bad.length >= FrameHeader.LENGTH && FrameHeader.sessionId(new UnsafeBuffer(bad), 0) == validSession) {
                new UnsafeBuffer(bad).putLong(FrameHeader.SEQUENCE_OFFSET, seq, java.nio.ByteOrder.LITTLE_ENDIAN);
            }
            inject(pub, bad);
        }
        final String last = "v" + seq;
        expected.add(last);
        inject(pub, frame(topic.topicId(), FrameHeader.FLAGS_UNFRAGMENTED, validSession, seq, last));

        assertTrue(rec.awaitUntil(list -> list.stream().anyMatch(r -> r.value().equals(last)), deliveryTimeout),
            "the last valid frame did not arrive; got " + rec.values());
        // every frame was injected before the last valid one, on one in-order path, so all are judged once it arrived
        // (the undecodable payload too: its ring slot comes before the last frame's); the wait is a margin only
        final long malformedExpected = garbage.size();
        awaitCount(() -> statsOf(subBus, topic).malformedFrames(), malformedExpected, scaled(Duration.ofSeconds(5)));
        final List<Received<String>> valid = rec.received().subList(probesSeen, rec.count()).stream()
            .filter(r -> r.sessionId() != probeSession).toList();
        assertEquals(expected, valid.stream().map(Received::value).toList(), "the subscriber must get exactly the valid frames");
        assertTrue(valid.stream().allMatch(r -> r.sessionId() == validSession && r.lostBefore() == 0),
            "garbage frames disturbed the valid session (loss or foreign session): " + valid);
        final SubscriptionStats stats = statsOf(subBus, topic);
        assertEquals(malformedExpected, stats.malformedFrames(), "malformed frames counted: " + stats);
        assertEquals(0, stats.duplicates(), "a rejected frame advanced the session's sequence: " + stats);
        assertNull(rec.error(), "a malformed frame reached the subscriber as an error");
        assertFalse(rec.isCompleted(), "a malformed frame completed the subscriber");
    }

    /**
     * Forged sequence numbers in a valid RELIABLE session (one 2^60 ahead, one 3 ahead, between its frames): each is a
     * suspect that the session's next frame refutes, so the subscriber gets exactly the valid frames with no reported
     * loss, and each forged frame counts as malformed, never as a gap or a duplicate. Then the session jumps for real
     * (its frames continue from the jumped sequence, as after a reconnect that lost frames): the jump is taken when its
     * second frame follows the first, and the loss, the held first frame included, is reported exactly in
     * {@code lostBefore} and {@code gapMessages} (docs/wire-format.md, sequence rule).
     */
    @Test
    @ScaledTimeout(30)
    void forgedSequenceJumpsAreMalformedAndAGenuineJumpIsAGap() throws InterruptedException {
        final Bus subBus = bus("sub");
        final Topic<String> topic = topic("jump-r", Delivery.RELIABLE);
        final Recorder<String> rec = subscribe(subBus, topic, SubscribeOptions.defaults());
        final TransportPublication pub = rawPublication(topic);
        final int session = 0x7e57_0012;
        awaitRawProbe(pub, topic, rec, 0x7e57_0011);
        final SubscriptionStats before = statsOf(subBus, topic);

        inject(pub, frame(topic.topicId(), WHOLE, session, 0, "v0"));
        inject(pub, frame(topic.topicId(), WHOLE, session, 1L << 60, "forged-far"));
        inject(pub, frame(topic.topicId(), WHOLE, session, 1, "v1"));
        inject(pub, frame(topic.topicId(), WHOLE, session, 2 + 3, "forged-near"));
        inject(pub, frame(topic.topicId(), WHOLE, session, 2, "v2"));
        awaitValue(rec, session, "v2");
        List<Received<String>> got = ofSession(rec, session);
        assertEquals(List.of("v0", "v1", "v2"), values(got), "the subscriber must get exactly the valid frames");
        assertEquals(List.of(0L, 0L, 0L), lostBefore(got), "forged frames made the valid session report loss");
        assertCountsSince(before, statsOf(subBus, topic), 2, 0, 0);

        // a genuine jump: 3..42 never sent, the stream goes on from 43
        final long jumpTo = 43;
        for (long s = jumpTo; s < jumpTo + 3; s++) {
            inject(pub, frame(topic.topicId(), WHOLE, session, s, "j" + s));
        }
        awaitValue(rec, session, "j" + (jumpTo + 2));
        got = ofSession(rec, session);
        assertEquals(List.of("v0", "v1", "v2", "j" + (jumpTo + 1), "j" + (jumpTo + 2)), values(got),
            "after the valid frames, the jump's frames but its first, held until the next one followed it");
        assertEquals(List.of(0L, 0L, 0L, jumpTo + 1 - 3, 0L), lostBefore(got), "3.." + jumpTo + " are lost, each once");
        assertCountsSince(before, statsOf(subBus, topic), 2, jumpTo + 1 - 3, 0);
        assertNull(rec.error(), "hostile frames reached the subscriber as an error");
        assertFalse(rec.isCompleted(), "hostile frames completed the subscriber");
    }

    /**
     * A BEST_EFFORT session: a jump of at most {@link FrameHeader#BEST_EFFORT_GAP_BOUND} frames is a gap taken at once
     * (the frame arrives with no later frame sent) and reported in {@code lostBefore}; a frame forged one more ahead is
     * refuted by the session's next frame and counts as malformed; a genuine jump beyond the bound is taken when its
     * second frame follows the first, its first frame reported among the lost (docs/wire-format.md, sequence rule).
     */
    @Test
    @ScaledTimeout(30)
    void bestEffortJumpsWithinTheBoundAreGapsAndBeyondItNeedTheNextFrame() throws InterruptedException {
        final Bus subBus = bus("sub");
        final Topic<String> topic = topic("jump-be", Delivery.BEST_EFFORT);
        final Recorder<String> rec = subscribe(subBus, topic, SubscribeOptions.defaults());
        final TransportPublication pub = rawPublication(topic);
        final int session = 0x7e57_0022;
        awaitRawProbe(pub, topic, rec, 0x7e57_0021);
        final SubscriptionStats before = statsOf(subBus, topic);
        final long bound = FrameHeader.BEST_EFFORT_GAP_BOUND;

        inject(pub, frame(topic.topicId(), WHOLE, session, 0, "v0"));
        final long within = 1 + bound; // a jump of exactly the bound
        inject(pub, frame(topic.topicId(), WHOLE, session, within, "within"));
        awaitValue(rec, session, "within");
        final long next = within + 1;
        inject(pub, frame(topic.topicId(), WHOLE, session, next + bound + 1, "forged"));
        inject(pub, frame(topic.topicId(), WHOLE, session, next, "next"));
        awaitValue(rec, session, "next");
        final long far = next + 1 + bound + 1; // a jump of the bound + 1, for real
        inject(pub, frame(topic.topicId(), WHOLE, session, far, "far"));
        inject(pub, frame(topic.topicId(), WHOLE, session, far + 1, "after-far"));
        awaitValue(rec, session, "after-far");

        final List<Received<String>> got = ofSession(rec, session);
        assertEquals(List.of("v0", "within", "next", "after-far"), values(got), "values of the session");
        assertEquals(List.of(0L, bound, 0L, bound + 2), lostBefore(got), "lostBefore of each");
        assertCountsSince(before, statsOf(subBus, topic), 1, bound + bound + 2, 0);
        assertNull(rec.error(), "hostile frames reached the subscriber as an error");
        assertFalse(rec.isCompleted(), "hostile frames completed the subscriber");
    }

    private TransportPublication rawPublication(final Topic<?> topic) {
        final Transport raw = fixture.newRawTransport();
        toClose.add(raw);
        final TransportPublication pub = raw.addPublication(topic.descriptor());
        toClose.add(pub);
        return pub;
    }

    /** Injects probe frames of {@code probeSession} until one reached the subscriber: the raw path is connected. */
    private void awaitRawProbe(final TransportPublication pub, final Topic<String> topic, final Recorder<String> rec, final int probeSession)
        throws InterruptedException {
        final long deadlineNs = System.nanoTime() + connectTimeout.toNanos();
        long probeSequence = 0;
        while (rec.count(r -> r.sessionId() == probeSession) == 0) {
            assertTrue(System.nanoTime() < deadlineNs, "no probe frame from the raw transport reached the subscriber within " + connectTimeout);
            inject(pub, frame(topic.topicId(), WHOLE, probeSession, probeSequence++, PROBE));
            rec.awaitUntil(list -> list.stream().anyMatch(r -> r.sessionId() == probeSession), Duration.ofMillis(50));
        }
    }

    private void awaitValue(final Recorder<String> rec, final int session, final String value) throws InterruptedException {
        assertTrue(rec.awaitUntil(list -> list.stream().anyMatch(r -> r.sessionId() == session && r.value().equals(value)), deliveryTimeout),
            "'" + value + "' did not arrive within " + deliveryTimeout + "; the session got " + values(ofSession(rec, session)));
    }

    /** Waits until {@code counter} reaches {@code expected} (it may pass it: the caller asserts the exact value). */
    private static void awaitCount(final LongSupplier counter, final long expected, final Duration bound) {
        Awaitility.await().atMost(bound).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10))
            .until(() -> counter.getAsLong() >= expected);
    }

    /** The malformed, gap and duplicate counts since {@code before}: the probes before it are no part of the case. */
    private static void assertCountsSince(final SubscriptionStats before, final SubscriptionStats now, final long malformed, final long gaps,
                                          final long duplicates) {
        assertEquals(List.of(malformed, gaps, duplicates), List.of(now.malformedFrames() - before.malformedFrames(),
            now.gapMessages() - before.gapMessages(), now.duplicates() - before.duplicates()),
            "malformedFrames, gapMessages, duplicates counted by the case: " + now);
    }

    private static List<Received<String>> ofSession(final Recorder<String> rec, final int session) {
        return rec.received().stream().filter(r -> r.sessionId() == session).toList();
    }

    private static List<String> values(final List<Received<String>> received) {
        return received.stream().map(Received::value).toList();
    }

    private static List<Long> lostBefore(final List<Received<String>> received) {
        return received.stream().map(Received::lostBefore).toList();
    }
}
