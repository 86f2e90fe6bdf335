package io.rdmabus.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.Serializable;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * Cases of the transport compatibility kit about a subscriber slower than its publisher: RELIABLE holds the publisher
 * back without loss; BEST_EFFORT never blocks the publisher and accounts for every drop under each slow-consumer policy
 * (back-pressure, drop-oldest, conflation). Part of {@link TransportTck}, which a transport's test extends.
 */
public abstract class FlowControlTck extends DeliveryTck {

    FlowControlTck() {
    }

    // ------------------------------------------------------------------------------------------------ backpressure

    /**
     * RELIABLE with a subscriber that takes 1 ms per message and requests one at a time, fed four times
     * {@link TckFixture#maxBufferedReliableBytes()}: nothing is lost, duplicated, reordered or corrupted, and the
     * publisher is held back, i.e. when its {@code publish} completes the subscriber has already consumed all but at most
     * what the transport and the ring may buffer.
     */
    @Test
    @ScaledTimeout(50)
    void reliableSlowSubscriberBackPressuresThePublisherWithoutLoss() throws Exception {
        final int messageBytes = 64 * 1024;
        final int ringSlots = 16;
        final long bufferBound = fixture.maxBufferedReliableBytes();
        final int n = (int) Math.max(512, 4 * bufferBound / messageBytes);
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");
        final Topic<byte[]> topic = topic("slow", Codecs.bytes(), Delivery.RELIABLE).withMaxMessageLength(messageBytes);
        final Recorder<Integer> rec = Recorder.slow(Duration.ofMillis(1));
        // keep only the index (or -1 for a corrupt payload): the run is 4x the transport's buffers, too much to retain
        subBus.subscribeReceived(topic, SubscribeOptions.<byte[]>defaults().withRingSize(ringSlots))
            .map(r -> new Received<>(patternIndex(r.value()), r.sessionId(), r.sequence(), r.timestampNs(), r.lostBefore()))
            .subscribe(rec);
        toClose.add(rec::dispose);

        final AtomicLong consumedWhenPublishDone = new AtomicLong(-1);
        final CompletableFuture<Void> published = pubBus.publish(topic, Flux.range(0, n).map(i -> pattern(i, messageBytes)))
            .doOnSuccess(v -> consumedWhenPublishDone.set(rec.count()))
            .subscribeOn(Schedulers.boundedElastic())
            .toFuture();

        // stop waiting early once a message is missing (the last index differs from its position), or when the
        // publisher is done and nothing arrived for 5 s (the subscriber takes about 1 ms per message)
        final Duration waitBound = scaled(Duration.ofSeconds(40));
        final Duration stallBound = scaled(Duration.ofSeconds(5));
        final long waitDeadlineNs = System.nanoTime() + waitBound.toNanos();
        int lastCount = -1;
        long lastProgressNs = System.nanoTime();
        while (true) {
            final List<Received<Integer>> got = rec.received();
            if (got.size() >= n || !got.isEmpty() && got.get(got.size() - 1).value() != got.size() - 1) {
                break;
            }
            if (got.size() != lastCount) {
                lastCount = got.size();
                lastProgressNs = System.nanoTime();
            }
            final boolean stalled = published.isDone() && System.nanoTime() - lastProgressNs > stallBound.toNanos();
            if (stalled || System.nanoTime() > waitDeadlineNs || rec.error() != null) {
                fail("slow subscriber received " + got.size() + " of " + n + (stalled ? " and nothing more for " + stallBound + " after publish completed"
                    : " within " + waitBound) + "; error " + rec.error());
            }
            Thread.sleep(10);
        }
        published.get(stallBound.toNanos(), TimeUnit.NANOSECONDS);
        assertNull(rec.error());
        final List<Integer> indexes = rec.values();
        assertFalse(indexes.contains(-1), "a payload arrived corrupted");
        assertEquals(IntStream.range(0, n).boxed().toList(), indexes, "lost, duplicated or reordered messages");
        assertTrue(rec.received().stream().allMatch(r -> r.lostBefore() == 0), "a reliable stream reported loss");

        final long maxAhead = bufferBound / messageBytes + ringSlots + 2;
        final long consumed = consumedWhenPublishDone.get();
        assertTrue(consumed >= n - maxAhead, "publisher was not held back by the slow subscriber: publish of " + n
            + " messages completed when only " + consumed + " were consumed (the transport may buffer at most " + maxAhead
            + " messages of " + messageBytes + " bytes per TckFixture.maxBufferedReliableBytes())");
    }

    /**
     * RELIABLE topics do not block each other (no head-of-line blocking): between the same two buses, topic "stalled" has
     * a subscriber that requests nothing, so its publisher is offered messages until the transport answers
     * back-pressured; then topic "moving" still delivers every one of its messages. Once the stalled subscriber requests,
     * it gets everything that was taken, in order, none lost.
     */
    @Test
    @ScaledTimeout(40)
    void aBackPressuredReliableTopicDoesNotStallAnotherTopic() throws InterruptedException {
        final String knownLimitation = fixture.knownHeadOfLineBlocking();
        Assumptions.assumeTrue(knownLimitation == null, () -> "KNOWN LIMITATION of " + fixture.name() + ", reported as skipped, not passed: "
            + knownLimitation);
        final Bus pubBus = bus("hol-pub");
        final Bus subBus = bus("hol-sub");
        final Topic<String> stalledTopic = topic("hol-stalled", Delivery.RELIABLE);
        final Topic<String> movingTopic = topic("hol-moving", Delivery.RELIABLE);
        final Recorder<String> stalled = subscribe(subBus, stalledTopic, SubscribeOptions.<String>defaults().withRingSize(16),
            Recorder.manual());
        final Recorder<String> moving = subscribe(subBus, movingTopic, SubscribeOptions.defaults());
        final BusPublication<String> stalledPub = publication(pubBus, stalledTopic);
        final BusPublication<String> movingPub = publication(pubBus, movingTopic);
        awaitConnected(stalledPub);
        awaitConnected(movingPub);

        // fill everything between the stalled publisher and its subscriber until the transport pushes back
        final String filler = "s".repeat(1000);
        final long fillLimit = fixture.maxBufferedReliableBytes() / filler.length() + 64;
        final long deadlineNs = System.nanoTime() + deliveryTimeout.toNanos();
        int taken = 0;
        int status;
        while ((status = stalledPub.offer(taken + ":" + filler)) != PublishStatus.BACK_PRESSURED) {
            assertTrue(status == PublishStatus.OK || status == PublishStatus.NOT_CONNECTED, "stalled offer: " + PublishStatus.describe(status));
            taken += status == PublishStatus.OK ? 1 : 0;
            assertTrue(taken <= fillLimit, "topic " + stalledTopic.name() + " took " + taken + " messages of 1 KB with a subscriber that "
                + "requests nothing, more than TckFixture.maxBufferedReliableBytes() allows: the transport never pushed back");
            assertTrue(System.nanoTime() < deadlineNs, "topic " + stalledTopic.name() + " was not back-pressured within " + deliveryTimeout
                + " (" + taken + " messages taken)");
        }

        final int n = 200;
        for (int i = 0; i < n; i++) {
            offerUntilTaken(movingPub, "m-" + i);
        }
        assertTrue(moving.awaitCount(n, deliveryTimeout), "topic " + movingTopic.name() + " received " + moving.count() + " of " + n
            + " within " + deliveryTimeout + " while topic " + stalledTopic.name() + " was back-pressured (head-of-line blocking)");
        assertEquals(IntStream.range(0, n).mapToObj(i -> "m-" + i).toList(), moving.values(), "moving topic: lost or reordered");

        stalled.request(Long.MAX_VALUE);
        assertTrue(stalled.awaitCount(taken, deliveryTimeout), "stalled topic delivered " + stalled.count() + " of its " + taken
            + " taken messages within " + deliveryTimeout + " after its subscriber requested");
        final List<Integer> order = stalled.values().stream().map(v -> Integer.parseInt(v.substring(0, v.indexOf(':')))).toList();
        assertEquals(IntStream.range(0, taken).boxed().toList(), order, "stalled topic: lost, duplicated or reordered");
        assertTrue(stalled.received().stream().allMatch(r -> r.lostBefore() == 0), "a reliable stream reported loss");
    }

    // ------------------------------------------------------------------------------------------------ best-effort overload

    /**
     * BEST_EFFORT with the BACKPRESSURE policy and a subscriber that requests nothing while 2000 messages are published:
     * the publisher is not blocked, the ring fills, the rest is dropped and counted; after the subscriber requests and a
     * final message arrives, delivered + reported loss accounts for every published message, and each gap between
     * delivered messages equals the {@code lostBefore} reported on the later one.
     */
    @Test
    @ScaledTimeout(30)
    void bestEffortOverloadWithBackpressurePolicyCountsEveryDrop() throws InterruptedException {
        final int ringSlots = 64;
        final Overload run = overload("be-bp", SubscribeOptions.<String>defaults().withRingSize(ringSlots), i -> "m-" + i);
        assertTrue(run.dropped >= run.n - ringSlots - run.n / 4, "overload of " + run.n + " messages into a " + ringSlots
            + "-slot ring dropped only " + run.dropped + ": a best-effort subscriber that does not request must drop (and count) "
            + "at the ring, not hold the transport back (" + run.stats + ")");
        assertGapsMatchLostBefore(run.session);
    }

    /** BEST_EFFORT with {@code dropOldest(10)}: after overload the subscriber gets the newest ten, the rest is reported lost. */
    @Test
    @ScaledTimeout(30)
    void bestEffortOverloadWithDropOldestKeepsTheNewest() throws InterruptedException {
        final int keep = 10;
        // a ring larger than the run: every drop is the policy's, none the ring's
        final Overload run = overload("be-drop", SubscribeOptions.<String>dropOldest(keep).withRingSize(4096), i -> "m-" + i);
        assertGapsMatchLostBefore(run.session);
        final List<Received<String>> beforeSentinel = run.beforeSentinels();
        assertTrue(beforeSentinel.size() <= keep, "dropOldest(" + keep + ") delivered " + beforeSentinel.size() + " overload messages");
        if (run.stats.gapMessages() == 0) {
            assertEquals(IntStream.range(run.n - keep, run.n).mapToObj(i -> "m-" + i).toList(),
                beforeSentinel.stream().map(Received::value).toList(), "dropOldest must keep the newest " + keep);
        }
    }

    /** BEST_EFFORT with {@code conflateLatest(key)}: after overload the subscriber gets exactly the latest value per key. */
    @Test
    @ScaledTimeout(30)
    void bestEffortOverloadWithConflationKeepsTheLatestPerKey() throws InterruptedException {
        final int keys = 8;
        // a ring larger than the run: every drop is the policy's, none the ring's
        // serializable, so that a fixture whose subscriber bus lives in another process can hand it over (tck.remote)
        final Function<String, String> key = (Function<String, String> & Serializable) FlowControlTck::conflationKey;
        final Overload run = overload("be-conflate", SubscribeOptions.<String>conflateLatest(key).withRingSize(4096),
            i -> "k" + (i % keys) + ":" + i);
        final List<Received<String>> beforeSentinel = run.beforeSentinels();
        final Map<String, List<Integer>> byKey = beforeSentinel.stream().collect(Collectors.groupingBy(r -> conflationKey(r.value()),
            Collectors.mapping(r -> (int) index(r.value()), Collectors.toList())));
        assertTrue(byKey.values().stream().allMatch(l -> l.size() == 1), "conflation delivered more than one value for a key: " + byKey);
        if (run.stats.gapMessages() == 0) {
            final Map<String, List<Integer>> expected = new HashMap<>();
            for (int i = run.n - keys; i < run.n; i++) {
                expected.put("k" + (i % keys), List.of(i));
            }
            assertEquals(expected, byKey, "conflateLatest must keep the latest value of each key");
        }
    }

    private record Overload(int n, List<Received<String>> session, SubscriptionStats stats, long dropped) {
        /**
         * @return what the session delivered before its first sentinel: on a loaded host a sentinel may take longer than
         *         the 200 ms after which the next one is offered, and then several arrive
         */
        List<Received<String>> beforeSentinels() {
            int end = 0;
            while (end < session.size() && !session.get(end).value().startsWith("end")) {
                end++;
            }
            return session.subList(0, end);
        }
    }

    /**
     * Publishes {@code n} messages to a subscriber that does not request, then requests everything, then publishes
     * sentinels until one arrives, and checks: delivered + sum(lostBefore) == published, and the subscription's
     * counters (dropped + gaps) equal the reported loss.
     */
    private Overload overload(final String name, final SubscribeOptions<String> options,
                              final java.util.function.IntFunction<String> value) throws InterruptedException {
        final int n = 2_000;
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");
        final Topic<String> topic = topic(name, Delivery.BEST_EFFORT);
        final Recorder<String> rec = subscribe(subBus, topic, options, Recorder.manual());

        // connect without demand: a probe publication until the subscription counts a frame
        final BusPublication<String> probe = publication(pubBus, topic);
        final long deadlineNs = System.nanoTime() + connectTimeout.toNanos();
        while (statsOf(subBus, topic).framesReceived() == 0) {
            probe.offer(PROBE);
            assertTrue(System.nanoTime() < deadlineNs, "no probe reached the subscription within " + connectTimeout);
            Thread.sleep(20);
        }
        final long probeFrames = statsOf(subBus, topic).framesReceived();
        final BusPublication<String> pub = publication(pubBus, topic);
        awaitConnected(pub);
        final Duration offerBound = scaled(Duration.ofSeconds(10));
        final long offerDeadlineNs = System.nanoTime() + offerBound.toNanos();
        int published = 0;
        while (published < n) {
            final int status = pub.offer(value.apply(published));
            if (status == PublishStatus.OK) {
                published++;
            } else if (status == PublishStatus.BACK_PRESSURED || status == PublishStatus.NOT_CONNECTED) {
                assertTrue(System.nanoTime() < offerDeadlineNs, "best-effort publisher blocked by a subscriber that does not request: "
                    + published + " of " + n + " taken in " + offerBound + ", last status " + PublishStatus.describe(status)
                    + " (best effort must drop at the subscriber, not back-pressure the publisher)");
                LockSupport.parkNanos(OFFER_RETRY_PAUSE_NS);
            } else {
                fail("offer returned " + PublishStatus.describe(status));
            }
        }
        // let the transport hand everything over (frames received or counted as dropped), then request
        awaitStable(() -> statsOf(subBus, topic).framesReceived() + statsOf(subBus, topic).gapMessages());
        rec.request(Long.MAX_VALUE);
        // what the subscriber held arrives first: a sentinel offered before the request reached a subscriber in another
        // process (the split fixture: 200 ms was not enough between two emulated guests) would join what it holds and,
        // with drop-oldest, evict the oldest of it
        assertTrue(rec.awaitUntil(list -> list.stream().anyMatch(r -> r.sessionId() == pub.sessionId()), deliveryTimeout),
            "nothing the subscriber held arrived within " + deliveryTimeout + " after it requested");
        int sentinels = 0;
        final long sentinelDeadlineNs = System.nanoTime() + deliveryTimeout.toNanos();
        while (!rec.awaitUntil(list -> list.stream().anyMatch(r -> r.sessionId() == pub.sessionId() && r.value().startsWith("end")),
            Duration.ofMillis(200))) {
            assertTrue(System.nanoTime() < sentinelDeadlineNs, "no sentinel arrived after the subscriber requested");
            offerUntilTaken(pub, "end" + sentinels);
            sentinels++;
        }
        assertNull(rec.error(), "subscriber got an error");
        final List<Received<String>> session = rec.received().stream().filter(r -> r.sessionId() == pub.sessionId()).toList();
        final long lost = session.stream().mapToLong(Received::lostBefore).sum();
        final long total = n + sentinels;
        assertEquals(total, session.size() + lost, "published " + total + " (" + n + " + " + sentinels + " sentinels), delivered "
            + session.size() + ", reported lost " + lost + ": silent loss");
        final List<Received<String>> all = rec.received();
        final long allLost = all.stream().mapToLong(Received::lostBefore).sum();
        final SubscriptionStats stats = statsOf(subBus, topic);
        // counters include the probe session, whose trailing drops no later probe reports in lostBefore
        final long unreported = stats.droppedBySubscriber() + stats.gapMessages() - allLost;
        assertTrue(unreported >= 0 && unreported <= probeFrames, "sum of lostBefore " + allLost
            + " does not match droppedBySubscriber + gapMessages (allowing " + probeFrames + " probe frames): " + stats);
        assertEquals(all.size(), stats.messagesDelivered(), "messagesDelivered differs from what the subscriber got: " + stats);
        return new Overload(n, session, stats, stats.droppedBySubscriber());
    }

    private static void assertGapsMatchLostBefore(final List<Received<String>> session) {
        long previous = -1;
        for (final Received<String> r : session) {
            if (r.value().startsWith("end")) {
                break;
            }
            final long index = index(r.value());
            assertTrue(index > previous, "out of order: " + index + " after " + previous);
            assertEquals(index - previous - 1, r.lostBefore(), "message " + index + " after " + previous + " reports lostBefore "
                + r.lostBefore());
            previous = index;
        }
    }

    // ------------------------------------------------------------------------------------------------ helpers

    /** Waits until {@code counter} has not changed for 300 ms (at most 10 s times the time factor). */
    private void awaitStable(final java.util.function.LongSupplier counter) throws InterruptedException {
        final long deadlineNs = System.nanoTime() + scaled(Duration.ofSeconds(10)).toNanos();
        long last = counter.getAsLong();
        long stableSinceNs = System.nanoTime();
        while (System.nanoTime() < deadlineNs) {
            Thread.sleep(20);
            final long now = counter.getAsLong();
            if (now != last) {
                last = now;
                stableSinceNs = System.nanoTime();
            } else if (System.nanoTime() - stableSinceNs >= TimeUnit.MILLISECONDS.toNanos(300)) {
                return;
            }
        }
    }

    /** A payload whose every byte depends on its index, so corruption anywhere is seen. */
    private static byte[] pattern(final int index, final int length) {
        final byte[] bytes = new byte[length];
        new UnsafeBuffer(bytes).putInt(0, index);
        for (int j = 4; j < length; j++) {
            bytes[j] = (byte) (index * 31 + j);
        }
        return bytes;
    }

    /** @return the index of a {@link #pattern} payload, or -1 if any byte is wrong */
    private static int patternIndex(final byte[] bytes) {
        if (bytes.length < 4) {
            return -1;
        }
        final int index = new UnsafeBuffer(bytes).getInt(0);
        for (int j = 4; j < bytes.length; j++) {
            if (bytes[j] != (byte) (index * 31 + j)) {
                return -1;
            }
        }
        return index;
    }

    private static String conflationKey(final String value) {
        final int colon = value.indexOf(':');
        return colon < 0 ? value : value.substring(0, colon);
    }

    private static long index(final String value) {
        final int at = Math.max(value.lastIndexOf('-'), value.lastIndexOf(':'));
        return Long.parseLong(value.substring(at + 1));
    }
}
