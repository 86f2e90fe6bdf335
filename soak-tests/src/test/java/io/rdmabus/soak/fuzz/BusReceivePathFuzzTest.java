package io.rdmabus.soak.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.rdmabus.Bus;
import io.rdmabus.Delivery;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.SubscriptionSink;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.Disposable;

/**
 * Feeds random and mutated frames through the bus's real receive path (DefaultBus, SubscriptionChannel, ring,
 * delivery agent, Flux) between the frames of one valid publisher session, from a thread that plays the transport's
 * receive loop, and frames of the valid session with forged sequence numbers (ahead of it, beyond the BEST_EFFORT bound
 * on a best-effort topic). Checks: onFrame never throws and returns promptly; every frame that breaks a documented header
 * rule is counted as malformed and dropped; well-formed frames with a corrupt payload are counted as malformed by the
 * codec step; the sequence counters (frames received, duplicates, gaps, refuted suspects) are exactly those of
 * {@link SequenceModel}, the sequence rule of docs/wire-format.md; the valid session arrives complete and in order
 * (RELIABLE) or with every wire loss reported in {@code lostBefore} (BEST_EFFORT), forged frames notwithstanding; the
 * subscriber never sees an error or completion.
 */
class BusReceivePathFuzzTest {
    private static final int MAX_FRAME = 1024;
    private static final int VALID_SESSION = 0x5EED_0001;
    private static final int GARBAGE_SESSION = 0x5EED_0002;
    private static final long ON_FRAME_BOUND_NS = TimeUnit.MILLISECONDS.toNanos(500);

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void reliableSessionSurvivesGarbage() throws InterruptedException {
        run(Delivery.RELIABLE);
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void bestEffortSessionReportsEveryLossAmidGarbage() throws InterruptedException {
        run(Delivery.BEST_EFFORT);
    }

    private static byte[] frame(final int topicId, final int sessionId, final long sequence, final long value) {
        final byte[] b = new byte[FrameHeader.LENGTH + CheckedLongCodec.LENGTH];
        final UnsafeBuffer buf = new UnsafeBuffer(b);
        FrameHeader.write(buf, 0, FrameHeader.FLAGS_UNFRAGMENTED, b.length, topicId, sessionId, sequence, System.nanoTime());
        new CheckedLongCodec().encode(value, buf, FrameHeader.LENGTH);
        return b;
    }

    private void run(final Delivery delivery) throws InterruptedException {
        final Fuzz fuzz = Fuzz.start("bus receive path " + delivery);
        final Topic<Long> topic = Topic.of("fuzz." + delivery.name().toLowerCase(java.util.Locale.ROOT), new CheckedLongCodec(), delivery);
        final InjectingTransport transport = new InjectingTransport(MAX_FRAME, MAX_FRAME);
        final List<Received<Long>> got = new CopyOnWriteArrayList<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final AtomicBoolean completed = new AtomicBoolean();
        try (Bus bus = Bus.builder().name("fuzz-" + delivery).transport(transport).discovery(StaticSeedDiscovery.none()).build()) {
            final Disposable sub = bus.subscribeReceived(topic, SubscribeOptions.<Long>defaults().withRingSize(256))
                .subscribe(got::add, error::set, () -> completed.set(true));
            final long waitNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            SubscriptionSink sink;
            while ((sink = transport.sink(topic.topicId())) == null && System.nanoTime() < waitNs) {
                Thread.sleep(5);
            }
            assertNotNull(sink, "the bus never subscribed at the transport");

            final Campaign campaign = new Campaign(fuzz, sink, topic.topicId(), delivery);
            while (fuzz.more()) {
                campaign.step(fuzz.nextCase());
            }
            final long last = campaign.finish();

            final long deliverDeadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (got.stream().noneMatch(r -> r.sessionId() == VALID_SESSION && r.value() == last) && System.nanoTime() < deliverDeadlineNs) {
                Thread.sleep(10);
            }
            Thread.sleep(100);
            final SubscriptionStats stats = bus.stats().subscriptions().stream().filter(s -> s.topic().equals(topic.name())).findFirst()
                .orElseThrow();
            final List<Received<Long>> valid = got.stream().filter(r -> r.sessionId() == VALID_SESSION).toList();
            System.out.println(campaign.summary(got.size(), stats));

            assertNull(error.get(), fuzz.fail("malformed input reached the subscriber as an error: " + error.get()));
            assertFalse(completed.get(), fuzz.fail("malformed input completed the subscriber"));
            assertTrue(valid.stream().anyMatch(r -> r.value() == last), fuzz.fail("the last valid message never arrived"));
            campaign.assertValidSession(valid, last);
            campaign.assertCounters(stats);
            sub.dispose();
        }
    }

    /** One run's frames and what the sequence rule expects of them; used by the test thread only, which plays the receive loop. */
    private static final class Campaign {
        private final Fuzz fuzz;
        private final SubscriptionSink sink;
        private final int topicId;
        private final Delivery delivery;
        private long validSent;              // valid-session frames put on the "wire" (sequence 0..validSeq-1 exist)
        private long validSkipped;           // BEST_EFFORT: valid-session sequences never sent (wire loss)
        private long replays;                // copies of already-sent valid frames (must count as duplicates)
        private long headerRejected;         // garbage the documented header rules reject (or another topic's id)
        private long headerAccepted;         // garbage that is a well-formed header of this topic
        private long forged;                 // valid-session frames with a forged sequence ahead (suspects the next frame refutes)
        private long pendingForged = -1;     // the forged sequence when it was the valid session's last frame, else -1
        private final SequenceModel model;
        private long maxOnFrameNs;
        private long validSeq;
        private long firstOffered = -1;      // the valid session's first sequence the bus saw: it counts losses from there
        private final List<byte[]> sentValid = new ArrayList<>();
        private long garbageSeq;

        Campaign(final Fuzz fuzz, final SubscriptionSink sink, final int topicId, final Delivery delivery) {
            this.fuzz = fuzz;
            this.sink = sink;
            this.topicId = topicId;
            this.delivery = delivery;
            model = new SequenceModel(delivery == Delivery.RELIABLE, FrameHeader.BEST_EFFORT_GAP_BOUND);
        }

        /** One case: a valid frame (or, BEST_EFFORT, one lost on the wire), garbage, a forged sequence or a replay. */
        void step(final SplittableRandom rnd) throws InterruptedException {
            final byte[] toSend;
            boolean isValid = false;
            boolean isForged = false;
            final int kind = rnd.nextInt(7);
            switch (kind) {
                case 0, 1 -> {
                    if (delivery == Delivery.BEST_EFFORT && rnd.nextInt(10) == 0) {
                        validSeq++; // a datagram lost on the wire
                        validSkipped++;
                        return;
                    }
                    toSend = frame(topicId, VALID_SESSION, validSeq, validSeq);
                    if (firstOffered < 0) {
                        firstOffered = validSeq;
                    }
                    validSeq++;
                    isValid = true;
                }
                case 2 -> {
                    toSend = Fuzz.bytes(rnd, rnd.nextInt(2 * FrameHeader.LENGTH + 16));
                }
                case 6 -> {
                    if (firstOffered < 0) {
                        return; // the valid session's first frame sets its expectation: forge only after it
                    }
                    // ahead of anything the valid session will send next (BEST_EFFORT: beyond the bound), near or far
                    final long min = validSeq + (delivery == Delivery.RELIABLE ? 1 : FrameHeader.BEST_EFFORT_GAP_BOUND + 1);
                    long forgedSeq = min + (rnd.nextBoolean() ? rnd.nextInt(8) : rnd.nextLong(Long.MAX_VALUE / 2));
                    if (forgedSeq == pendingForged + 1) {
                        forgedSeq++; // the previous forged frame + 1 would confirm it: two frames forged in concert
                    }
                    pendingForged = forgedSeq;
                    toSend = frame(topicId, VALID_SESSION, forgedSeq, forgedSeq);
                    isForged = true;
                }
                case 3 -> {
                    if (sentValid.isEmpty()) {
                        return;
                    }
                    toSend = sentValid.get(rnd.nextInt(sentValid.size())).clone();
                    replays++;
                }
                default -> {
                    final byte[] b = frame(topicId, GARBAGE_SESSION, garbageSeq++, rnd.nextLong());
                    Fuzz.mutate(rnd, b, 1 + rnd.nextInt(3));
                    if (rnd.nextInt(4) == 0) {
                        final byte[] resized = java.util.Arrays.copyOf(b, rnd.nextInt(b.length + 24));
                        toSend = resized;
                    } else {
                        toSend = b;
                    }
                }
            }
            final boolean replay = kind == 3;
            if (isValid || replay) {
                pendingForged = -1;
            }
            if (!isValid && !replay && !isForged && toSend.length >= FrameHeader.LENGTH
                && FrameHeader.sessionId(new UnsafeBuffer(toSend), 0) == VALID_SESSION) {
                // garbage must not pose as the valid session (that is a forged publisher, not malformed input)
                new UnsafeBuffer(toSend).putInt(FrameHeader.SESSION_ID_OFFSET, GARBAGE_SESSION + 1, ByteOrder.LITTLE_ENDIAN);
            }
            boolean wellFormed = true;
            if (isForged) {
                forged++;
            } else if (!isValid && !replay) {
                wellFormed = FrameHeaderFuzzTest.modelAccepts(toSend, 0, toSend.length, MAX_FRAME)
                    && FrameHeader.topicId(new UnsafeBuffer(toSend), 0) == topicId;
                if (wellFormed) {
                    headerAccepted++;
                } else {
                    headerRejected++;
                }
            }
            if (wellFormed) {
                final UnsafeBuffer header = new UnsafeBuffer(toSend);
                model.judge(FrameHeader.sessionId(header, 0), FrameHeader.sequence(header, 0));
            }
            maxOnFrameNs = Math.max(maxOnFrameNs, offer(fuzz, sink, toSend, delivery));
            if (isValid) {
                validSent++;
                if (sentValid.size() < 64) {
                    sentValid.add(toSend);
                } else {
                    sentValid.set(rnd.nextInt(64), toSend);
                }
            }
        }

        /** Sends a final valid frame, so every earlier loss of the valid session is reported on something. @return its value */
        long finish() throws InterruptedException {
            final long last = validSeq;
            model.judge(VALID_SESSION, last);
            maxOnFrameNs = Math.max(maxOnFrameNs, offer(fuzz, sink, frame(topicId, VALID_SESSION, last, last), delivery));
            validSent++;
            return last;
        }

        String summary(final int delivered, final SubscriptionStats stats) {
            return fuzz.summary("validSent=" + validSent + " validSkipped=" + validSkipped + " replays=" + replays
                + " garbageRejectedByHeader=" + headerRejected + " garbageWellFormed=" + headerAccepted + " forged=" + forged
                + " delivered=" + delivered + " maxOnFrameUs=" + maxOnFrameNs / 1000 + " " + model + " stats=" + stats);
        }

        /** The valid session arrived complete and in order (RELIABLE) or with every loss reported (BEST_EFFORT). */
        void assertValidSession(final List<Received<Long>> valid, final long last) {
            final long lostReported = valid.stream().mapToLong(Received::lostBefore).sum();
            for (final Received<Long> r : valid) {
                assertEquals(r.sequence(), r.value(), fuzz.fail("valid session: value and sequence differ " + r));
            }
            if (delivery == Delivery.RELIABLE) {
                assertEquals(validSent, valid.size(), fuzz.fail("reliable valid session lost or duplicated messages"));
                for (int i = 0; i < valid.size(); i++) {
                    assertEquals(i, valid.get(i).value(), fuzz.fail("reliable valid session out of order at " + i));
                    assertEquals(0, valid.get(i).lostBefore(), fuzz.fail("reliable valid session reported a loss at " + i));
                }
            } else {
                for (int i = 1; i < valid.size(); i++) {
                    assertTrue(valid.get(i).value() > valid.get(i - 1).value(), fuzz.fail("best-effort valid session out of order at " + i));
                }
                // every sequence of the valid session from the first one the bus saw is either delivered or reported lost
                // (wire skips + local drops); sequences skipped before it are not a loss (a subscriber that joins a
                // stream late has lost nothing)
                final long from = firstOffered < 0 ? last : firstOffered;
                assertEquals(last + 1 - from, valid.size() + lostReported, fuzz.fail("best-effort losses reported (" + lostReported
                    + ") do not match the missing messages (" + (last + 1 - from - valid.size()) + "), skipped on the wire " + validSkipped
                    + ", first sequence offered " + from));
            }
        }

        /** The subscription's counters are exactly those of the sequence rule. */
        void assertCounters(final SubscriptionStats stats) {
            // the sequence rule, exactly: what was taken, what was behind, what was lost, which suspects were corrupt
            assertEquals(model.received, stats.framesReceived(), fuzz.fail("framesReceived differs from the sequence rule's " + model + ": " + stats));
            assertEquals(model.duplicates, stats.duplicates(), fuzz.fail("duplicates differ from the sequence rule's " + model + ": " + stats));
            assertEquals(model.gaps, stats.gapMessages(), fuzz.fail("gapMessages differs from the sequence rule's " + model + ": " + stats));
            assertTrue(model.refuted >= forged, fuzz.fail("a forged frame of the valid session was not refuted: " + model + ", forged " + forged));
            final long codecRejected = stats.malformedFrames() - headerRejected - model.refuted;
            assertTrue(codecRejected >= 0 && codecRejected <= headerAccepted, fuzz.fail("malformed count " + stats.malformedFrames()
                + " must be the " + headerRejected + " header-rejected frames, the " + model.refuted + " refuted suspects, plus at most the "
                + headerAccepted + " well-formed garbage frames"));
            assertEquals(validSent + replays + headerAccepted + forged, stats.framesReceived() + stats.duplicates() + model.suspects,
                fuzz.fail("every well-formed frame is received, a duplicate or a suspect: " + stats + ", " + model));
            assertTrue(stats.duplicates() >= replays, fuzz.fail("replayed valid frames not counted as duplicates: " + stats));
        }
    }

    /** Offers a frame as a transport would: a RELIABLE back-pressure means "offer again later". @return the longest call, ns */
    private static long offer(final Fuzz fuzz, final SubscriptionSink sink, final byte[] frame, final Delivery delivery) throws InterruptedException {
        if (delivery == Delivery.BEST_EFFORT) {
            // a credit-respecting sender: keep the ring from overflowing most of the time (overflow is still legal)
            final long paceDeadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (sink.availableCredits() < 8 && System.nanoTime() < paceDeadlineNs) {
                Thread.sleep(1);
            }
        }
        final UnsafeBuffer view = new UnsafeBuffer(frame);
        final long giveUpNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long longest = 0;
        while (true) {
            final long t0 = System.nanoTime();
            final int r;
            try {
                r = sink.onFrame(view, 0, frame.length);
            } catch (final RuntimeException ex) {
                throw new AssertionError(fuzz.fail("onFrame threw on " + frame.length + " bytes"), ex);
            }
            final long took = System.nanoTime() - t0;
            longest = Math.max(longest, took);
            assertTrue(took < ON_FRAME_BOUND_NS, fuzz.fail("onFrame blocked for " + took / 1000 + " us"));
            if (r == SubscriptionSink.CONTINUE) {
                return longest;
            }
            assertEquals(SubscriptionSink.BACK_PRESSURE, r, fuzz.fail("unknown onFrame result " + r));
            assertEquals(Delivery.RELIABLE, delivery, fuzz.fail("a best-effort sink back-pressured"));
            assertTrue(System.nanoTime() < giveUpNs, fuzz.fail("the reliable ring never drained (delivery stalled)"));
            Thread.sleep(1);
        }
    }
}
