package io.rdmabus.tck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.Serializable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import io.rdmabus.Bus;
import io.rdmabus.BusException;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.MessageTooLargeException;
import io.rdmabus.PublishStatus;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportCapabilities;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The transport compatibility kit: one JUnit 5 suite every transport configuration runs against real buses.
 *
 * <p>Usage, in a transport's test sources:
 * <pre>{@code
 * class TcpTckTest extends TransportTck {
 *     @Override
 *     protected TckFixture createFixture() {
 *         return new TcpFixture();
 *     }
 * }
 * }</pre>
 *
 * <p>The cases are this class's and those it inherits from {@link HostileFrameTck} (hostile frames: malformed headers
 * and payloads, forged sequence numbers); {@link TckBase} holds the lifecycle and the helpers they share.
 *
 * <p>Lifecycle: one fixture per test class ({@link TestInstance.Lifecycle#PER_CLASS}), created in {@link BeforeAll} and
 * closed in {@link AfterAll}, because fixtures may hold expensive shared parts (an embedded media driver). Isolation
 * between cases comes from fresh buses (unique names) and fresh topics (unique names) in every case; every bus a case
 * opens is closed after it. Every case is bounded by {@link ScaledTimeout} (times {@link TckFixture#timeFactor()}); the
 * whole suite takes well under two minutes on two cores.
 *
 * <p>Conventions: payloads are strings ({@code Codecs.utf8()}) or bytes ({@code Codecs.bytes()}). "Probes" are
 * messages published until every subscriber has seen one, so a case starts only when the path is known to be
 * connected end to end (a connected publication means at least one subscriber, not all of them).
 */
public abstract class TransportTck extends HostileFrameTck {

    // ------------------------------------------------------------------------------------------------ one to one

    /** RELIABLE, one publisher and one subscriber: every value arrives once, in order, from one session, with no loss. */
    @Test
    @ScaledTimeout(30)
    void reliableOneToOneDeliversEverythingInOrder() throws InterruptedException {
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");
        final Topic<String> topic = topic("r1to1", Delivery.RELIABLE);
        final Recorder<String> rec = subscribe(subBus, topic, SubscribeOptions.defaults());
        final int n = 10_000;
        final List<String> expected = IntStream.range(0, n).mapToObj(i -> "m-" + i).toList();

        // a reliable publish waits for a connected subscriber before its first value
        pubBus.publish(topic, Flux.fromIterable(expected)).block(deliveryTimeout);

        assertTrue(rec.awaitCount(n, deliveryTimeout), () -> "received " + rec.count() + " of " + n);
        assertNull(rec.error(), "subscriber got an error");
        final List<Received<String>> got = rec.received();
        assertEquals(expected, got.stream().map(Received::value).toList(), "values or order differ");
        assertEquals(1, got.stream().map(Received::sessionId).distinct().count(), "one publish is one session");
        assertTrue(got.stream().allMatch(r -> r.lostBefore() == 0), "a reliable stream reported loss");
        for (int i = 1; i < got.size(); i++) {
            assertTrue(got.get(i).sequence() > got.get(i - 1).sequence(), "sequences not increasing at " + i);
        }
        final SubscriptionStats stats = statsOf(subBus, topic);
        assertEquals(0, stats.gapMessages() + stats.droppedBySubscriber() + stats.malformedFrames() + stats.duplicates(),
            "reliable stream counted loss: " + stats);
        assertEquals(n + 0L, stats.messagesDelivered(), "messagesDelivered: " + stats);
        assertTrue(pubBus.stats().messagesPublished() >= n, "publisher counted " + pubBus.stats().messagesPublished());
    }

    /** BEST_EFFORT, one publisher and one subscriber with room for everything: exact values and order, no gap. */
    @Test
    @ScaledTimeout(30)
    void bestEffortOneToOneDeliversEverythingInOrder() throws InterruptedException {
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");
        final Topic<String> topic = topic("be1to1", Delivery.BEST_EFFORT);
        final int n = 2_000;
        // the ring holds the whole run: this case is about the transport, not about slow-consumer policy
        final Recorder<String> rec = subscribe(subBus, topic, SubscribeOptions.<String>defaults().withRingSize(4096));
        final BusPublication<String> pub = publication(pubBus, topic);
        awaitProbes(pub, List.of(rec));

        for (int i = 0; i < n; i++) {
            offerUntilTaken(pub, "m-" + i);
        }
        assertTrue(rec.awaitCount(probes(rec) + n, deliveryTimeout), () -> "received " + (rec.count() - probes(rec)) + " of " + n);
        final List<Received<String>> got = notProbes(rec.received());
        assertEquals(IntStream.range(0, n).mapToObj(i -> "m-" + i).toList(), got.stream().map(Received::value).toList(),
            "values or order differ");
        assertTrue(got.stream().allMatch(r -> r.sessionId() == pub.sessionId() && r.lostBefore() == 0),
            "loss reported or foreign session on an unloaded best-effort stream");
        assertNull(rec.error());
    }

    // ------------------------------------------------------------------------------------------------ many topics, fan-out

    /** 20 topics at once between the same two buses: each subscriber gets exactly its topic's values. */
    @Test
    @ScaledTimeout(40)
    void manyTopicsAtOnceHaveNoCrossTalk() throws InterruptedException {
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");
        final int topics = 20;
        final int n = 300;
        final List<Topic<String>> all = new ArrayList<>();
        final List<Recorder<String>> recs = new ArrayList<>();
        for (int k = 0; k < topics; k++) {
            final Topic<String> topic = topic("many" + k, Delivery.RELIABLE);
            all.add(topic);
            recs.add(subscribe(subBus, topic, SubscribeOptions.defaults()));
        }
        Flux.range(0, topics)
            .flatMap(k -> pubBus.publish(all.get(k), Flux.range(0, n).map(i -> "t" + k + "-" + i)).subscribeOn(Schedulers.boundedElastic()),
                topics)
            .then()
            .block(scaled(Duration.ofSeconds(30)));
        for (int k = 0; k < topics; k++) {
            final int topicIndex = k;
            final Recorder<String> rec = recs.get(k);
            assertTrue(rec.awaitCount(n, deliveryTimeout), "topic " + k + " received " + rec.count() + " of " + n);
            assertEquals(IntStream.range(0, n).mapToObj(i -> "t" + topicIndex + "-" + i).toList(), rec.values(),
                "topic " + k + " got foreign or missing values");
        }
        Thread.sleep(200); // anything late and foreign would show now
        for (int k = 0; k < topics; k++) {
            assertEquals(n, recs.get(k).count(), "topic " + k + " received extra values");
            assertEquals(0, statsOf(subBus, all.get(k)).malformedFrames(), "topic " + k + " saw frames of another topic");
        }
    }

    /** One publisher, three subscriber buses: every subscriber gets every value, in order (RELIABLE). */
    @Test
    @ScaledTimeout(40)
    void reliableFanOutToThreeBuses() throws InterruptedException {
        final Bus pubBus = bus("pub");
        final Topic<String> topic = topic("fanout", Delivery.RELIABLE);
        final List<Bus> subBuses = List.of(bus("sub-a"), bus("sub-b"), bus("sub-c"));
        final List<Recorder<String>> recs = subBuses.stream().map(b -> subscribe(b, topic, SubscribeOptions.<String>defaults())).toList();
        final BusPublication<String> pub = publication(pubBus, topic);
        awaitProbes(pub, recs);

        final int n = 5_000;
        for (int i = 0; i < n; i++) {
            offerUntilTaken(pub, "m-" + i);
        }
        final List<String> expected = IntStream.range(0, n).mapToObj(i -> "m-" + i).toList();
        for (int s = 0; s < recs.size(); s++) {
            final Recorder<String> rec = recs.get(s);
            assertTrue(rec.awaitUntil(list -> notProbes(list).size() >= n, deliveryTimeout),
                "subscriber " + s + " received " + notProbes(rec.received()).size() + " of " + n);
            final List<Received<String>> got = notProbes(rec.received());
            assertEquals(expected, got.stream().map(Received::value).toList(), "subscriber " + s + ": values or order differ");
            assertTrue(got.stream().allMatch(r -> r.lostBefore() == 0), "subscriber " + s + " reported loss on a reliable topic");
        }
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
        final Function<String, String> key = (Function<String, String> & Serializable) TransportTck::conflationKey;
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

    // ------------------------------------------------------------------------------------------------ sizes

    /**
     * Messages above the frame size, per the contract: RELIABLE messages several frames long are fragmented and arrive
     * intact; a BEST_EFFORT message one byte over a frame is refused ({@code MESSAGE_TOO_LARGE} from offer,
     * {@link MessageTooLargeException} from publish) while one that fits exactly arrives; a message over
     * {@code topic.maxMessageLength()} is refused on either delivery.
     */
    @Test
    @ScaledTimeout(40)
    void messagesLargerThanAFrameFollowTheContract() throws Exception {
        final TransportCapabilities caps;
        try (Transport raw = fixture.newRawTransport()) {
            caps = raw.capabilities();
        }
        assertEquals(fixture.maxBestEffortFrameLength(), caps.maxBestEffortFrameLength(),
            "fixture.maxBestEffortFrameLength() disagrees with the transport's capabilities");
        assertTrue(caps.maxReliableFrameLength() > FrameHeader.LENGTH && caps.maxBestEffortFrameLength() > FrameHeader.LENGTH,
            "frames must have room after the header: " + caps);
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");

        // RELIABLE: fragmentation and reassembly, sizes around the frame boundary and several frames long
        final int reliablePayload = caps.maxReliableFrameLength() - FrameHeader.LENGTH;
        final int large = (int) Math.min(Topic.MAX_MESSAGE_LENGTH_LIMIT, 5L * caps.maxReliableFrameLength() + 7);
        final List<Integer> sizes = Stream.of(1, reliablePayload, reliablePayload + 1, large)
            .filter(s -> s <= Topic.MAX_MESSAGE_LENGTH_LIMIT).distinct().toList();
        final Topic<byte[]> reliable = topic("large-r", Codecs.bytes(), Delivery.RELIABLE)
            .withMaxMessageLength(sizes.stream().mapToInt(Integer::intValue).max().orElseThrow());
        final Recorder<byte[]> rrec = subscribe(subBus, reliable, SubscribeOptions.<byte[]>defaults().withRingSize(16));
        final List<byte[]> sent = sizes.stream().map(s -> randomBytes(s)).toList();
        pubBus.publish(reliable, Flux.fromIterable(sent)).block(deliveryTimeout);
        assertTrue(rrec.awaitCount(sent.size(), deliveryTimeout), "received " + rrec.count() + " of " + sent.size() + " large messages");
        final List<byte[]> got = rrec.values();
        for (int i = 0; i < sent.size(); i++) {
            assertArrayEquals(sent.get(i), got.get(i), "message of " + sizes.get(i) + " bytes differs (max reliable frame "
                + caps.maxReliableFrameLength() + ")");
        }
        assertTrue(rrec.received().stream().allMatch(r -> r.lostBefore() == 0));

        // BEST_EFFORT: one frame at most
        final int bePayload = caps.maxBestEffortFrameLength() - FrameHeader.LENGTH;
        final Topic<byte[]> bestEffort = topic("large-be", Codecs.bytes(), Delivery.BEST_EFFORT)
            .withMaxMessageLength(Math.max(bePayload + 1, 1024));
        final Recorder<byte[]> berec = subscribe(subBus, bestEffort, SubscribeOptions.defaults());
        final BusPublication<byte[]> bePub = publication(pubBus, bestEffort);
        final byte[] fits = randomBytes(bePayload);
        final long deadlineNs = System.nanoTime() + connectTimeout.toNanos();
        while (berec.count() == 0) {
            assertTrue(System.nanoTime() < deadlineNs, "no best-effort message of exactly one frame arrived");
            offerUntilTaken(bePub, fits);
            berec.awaitCount(1, Duration.ofMillis(100));
        }
        assertArrayEquals(fits, berec.values().get(0), "a best-effort message of exactly one frame differs");
        final long publishedBefore = pubBus.stats().messagesPublished();
        assertEquals(PublishStatus.MESSAGE_TOO_LARGE, bePub.offer(randomBytes(bePayload + 1)),
            "offer of a best-effort message one byte over the frame (" + caps.maxBestEffortFrameLength() + ")");
        final Throwable beError = assertThrows(Throwable.class,
            () -> pubBus.publish(bestEffort, Mono.just(randomBytes(bePayload + 1))).block(deliveryTimeout));
        assertInstanceOf(MessageTooLargeException.class, beError, "publish of a best-effort message over one frame");
        assertEquals(publishedBefore, pubBus.stats().messagesPublished(), "a refused message was counted as published");

        // the topic's own limit, both deliveries
        for (final Delivery delivery : Delivery.values()) {
            final int limit = Math.min(64, bePayload);
            final Topic<byte[]> limited = topic("limit-" + delivery, Codecs.bytes(), delivery).withMaxMessageLength(limit);
            final BusPublication<byte[]> p = publication(pubBus, limited);
            assertEquals(PublishStatus.MESSAGE_TOO_LARGE, p.offer(new byte[limit + 1]), delivery + " offer over maxMessageLength");
            final Throwable error = assertThrows(Throwable.class,
                () -> pubBus.publish(limited, Mono.just(new byte[limit + 1])).block(deliveryTimeout));
            assertInstanceOf(MessageTooLargeException.class, error, delivery + " publish over maxMessageLength");
        }
        final Topic<byte[]> limited = topic("limit-ok", Codecs.bytes(), Delivery.RELIABLE).withMaxMessageLength(64);
        final Recorder<byte[]> lrec = subscribe(subBus, limited, SubscribeOptions.defaults());
        final byte[] exactly = randomBytes(64);
        pubBus.publish(limited, Mono.just(exactly)).block(deliveryTimeout);
        assertTrue(lrec.awaitCount(1, deliveryTimeout), "a message of exactly maxMessageLength did not arrive");
        assertArrayEquals(exactly, lrec.values().get(0));
    }

    // ------------------------------------------------------------------------------------------------ restarts

    /** Disposing a subscription stops its values; a new subscription on the same bus and topic gets later messages. */
    @Test
    @ScaledTimeout(40)
    void subscriberRestartReceivesLaterMessages() throws InterruptedException {
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");
        final Topic<String> topic = topic("subrestart", Delivery.RELIABLE);
        final BusPublication<String> pub = publication(pubBus, topic);

        final Recorder<String> first = subscribe(subBus, topic, SubscribeOptions.defaults());
        awaitProbes(pub, List.of(first));
        sendBatch(pub, "a", 100);
        awaitBatch(first, pub, "a", 100);
        first.dispose();
        assertTrue(subBus.stats().subscriptions().stream().noneMatch(s -> s.topic().equals(topic.name())),
            "a disposed subscription is still listed in stats: " + subBus.stats());
        final int firstCount = first.count();

        final Recorder<String> second = subscribe(subBus, topic, SubscribeOptions.defaults());
        awaitProbes(pub, List.of(second));
        sendBatch(pub, "b", 100);
        awaitBatch(second, pub, "b", 100);
        assertEquals(firstCount, first.count(), "a disposed subscription kept receiving");
        assertNull(first.error(), "dispose must not signal an error");
        assertNull(second.error());
    }

    /**
     * Closing a publication and opening another (new session), then closing the publishing bus and starting another
     * bus: the subscriber keeps receiving, from each new session, with nothing lost within a session.
     */
    @Test
    @ScaledTimeout(40)
    void publisherRestartIsPickedUpBySubscriber() throws InterruptedException {
        final Bus subBus = bus("sub");
        final Topic<String> topic = topic("pubrestart", Delivery.RELIABLE);
        final Recorder<String> rec = subscribe(subBus, topic, SubscribeOptions.defaults());

        final Bus pubBus = bus("pub");
        final BusPublication<String> first = publication(pubBus, topic);
        awaitProbes(first, List.of(rec));
        sendBatch(first, "a", 100);
        awaitBatch(rec, first, "a", 100);
        final int firstSession = first.sessionId();
        first.close();

        final BusPublication<String> second = publication(pubBus, topic);
        assertNotEquals(firstSession, second.sessionId(), "a new publication must have a new session");
        awaitProbes(second, List.of(rec));
        sendBatch(second, "b", 100);
        awaitBatch(rec, second, "b", 100);
        pubBus.close();

        final Bus restarted = bus("pub2");
        final BusPublication<String> third = publication(restarted, topic);
        awaitProbes(third, List.of(rec));
        sendBatch(third, "c", 100);
        awaitBatch(rec, third, "c", 100);
        assertNull(rec.error(), "a publisher going away must not fail the subscriber");
        assertFalse(rec.isCompleted(), "a publisher going away must not complete the subscriber");
    }

    // ------------------------------------------------------------------------------------------------ close

    /**
     * {@code close()} completes the bus's subscriptions, stops every thread named after the bus, makes publish,
     * publication, subscribe and offer fail, is idempotent, and releases transport resources (fixture hook).
     */
    @Test
    @ScaledTimeout(40)
    void closeReleasesEverything() throws InterruptedException {
        final String name = "tck-close-" + runId + "-" + names.incrementAndGet();
        final Bus closing = fixture.newBus(name);
        toClose.add(closing);
        final Bus other = bus("other");
        final Topic<String> inbound = topic("close-in", Delivery.RELIABLE);
        final Topic<String> outbound = topic("close-out", Delivery.RELIABLE);
        final Recorder<String> sub = subscribe(closing, inbound, SubscribeOptions.defaults());
        final Recorder<String> remote = subscribe(other, outbound, SubscribeOptions.defaults());
        final BusPublication<String> in = publication(other, inbound);
        final BusPublication<String> out = publication(closing, outbound);
        awaitProbes(in, List.of(sub));
        awaitProbes(out, List.of(remote));

        final Set<Thread> own = liveThreads(n -> n.startsWith(THREAD_PREFIX) && n.contains(name));
        assertFalse(own.isEmpty(), "no thread named " + THREAD_PREFIX + "...-" + name + " while the bus runs (naming convention)");

        closing.close();
        assertTrue(sub.awaitTermination(scaled(Duration.ofSeconds(5))), "a subscription did not terminate when its bus closed");
        assertTrue(sub.isCompleted(), "a subscription must complete (not fail) when its bus closes: " + sub.error());
        final Duration threadsGone = scaled(Duration.ofSeconds(10));
        final Set<Thread> left = awaitThreadsGone(t -> t.getName().startsWith(THREAD_PREFIX) && t.getName().contains(name), threadsGone);
        assertTrue(left.isEmpty(), "threads of the closed bus still alive after " + threadsGone + ": " + names(left));

        assertEquals(PublishStatus.CLOSED, out.offer("late"), "offer on a closed bus");
        final Throwable publishError = assertThrows(Throwable.class, () -> closing.publish(outbound, Mono.just("x")).block(deliveryTimeout));
        assertInstanceOf(BusException.class, publishError, "publish on a closed bus");
        assertThrows(BusException.class, () -> closing.publication(outbound), "publication on a closed bus");
        final Recorder<String> late = subscribe(closing, inbound, SubscribeOptions.defaults());
        assertTrue(late.awaitTermination(scaled(Duration.ofSeconds(5))), "subscribe on a closed bus must terminate");
        assertInstanceOf(BusException.class, late.error(), "subscribe on a closed bus must fail with a BusException");
        closing.close(); // idempotent
        fixture.assertTransportResourcesReleased(name);

        // the other side is unaffected: its subscription neither fails nor completes
        assertNull(remote.error(), "a peer closing must not fail another bus's subscriber");
        assertFalse(remote.isCompleted(), "a peer closing must not complete another bus's subscriber");
    }

    // ------------------------------------------------------------------------------------------------ malformed frames

    // ------------------------------------------------------------------------------------------------ reactive streams

    /**
     * The reactive-streams TCK's {@link PublisherVerification} rules, run against the bus's subscribe {@code Flux}
     * (see {@link BusPublisherVerification}). Each rule is one dynamic test; rules the RS TCK marks untested or that
     * it skips (its {@code SkipException}) are reported as aborted (skipped), never as passed.
     */
    @TestFactory
    Stream<DynamicTest> reactiveStreamsPublisherRules() {
        final Bus pubBus = bus("rs-pub");
        final Bus subBus = bus("rs-sub");
        // expectError and spec 3.17 wait the whole default timeout by design: 3 s keeps the rules quick yet tolerant of a slow connect
        final TestEnvironment env = new TestEnvironment(3_000, 200);
        final BusPublisherVerification verification = new BusPublisherVerification(env, fixture.publisherReferenceGcTimeoutMillis(), pubBus, subBus,
            this::closedBus, "tck.rs." + runId);
        // -Dtck.rs.rules=<regex> -Dtck.rs.repeat=N: run only the matching rules, N times each (to chase a flaky rule)
        final Pattern only = Pattern.compile(System.getProperty("tck.rs.rules", ".*"));
        final int repeat = Integer.getInteger("tck.rs.repeat", 1);
        final Duration ruleBound = scaled(Duration.ofSeconds(30));
        return Arrays.stream(PublisherVerification.class.getMethods())
            .filter(m -> Modifier.isPublic(m.getModifiers()) && m.getParameterCount() == 0 && isRule(m.getName()))
            .filter(m -> only.matcher(m.getName()).find())
            .sorted(Comparator.comparing(Method::getName))
            .flatMap(m -> Collections.nCopies(repeat, m).stream())
            .map(m -> DynamicTest.dynamicTest(m.getName(), () -> assertTimeoutPreemptively(ruleBound,
                () -> runRule(verification, m, fixture.knownReactiveStreamsFailures().get(m.getName())),
                () -> "RS TCK rule " + m.getName() + " took over " + ruleBound + "; last events " + verification.recentEvents() + "; "
                    + hangReport(pubBus, subBus))));
    }

    /** What a hung rule leaves behind: both buses' stats and the stacks of the bus, transport and test threads. */
    private static String hangReport(final Bus pubBus, final Bus subBus) {
        final StringBuilder report = new StringBuilder("publisher bus ").append(pubBus.stats())
            .append("; subscriber bus ").append(subBus.stats()).append("; threads:");
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            if (thread.getThreadGroup() != null && "system".equals(thread.getThreadGroup().getName())) {
                return; // reference handler, finalizer, signal dispatcher, ...
            }
            report.append("\n  \"").append(thread.getName()).append("\" ").append(thread.getState());
            for (int i = 0; i < Math.min(stack.length, 12); i++) {
                report.append("\n    at ").append(stack[i]);
            }
        });
        return report.toString();
    }

    private Bus closedBus() {
        final Bus closed = bus("rs-closed");
        closed.close();
        return closed;
    }

    private static boolean isRule(final String name) {
        return name.startsWith("required_") || name.startsWith("optional_") || name.startsWith("stochastic_")
            || name.startsWith("untested_");
    }

    private static void runRule(final PublisherVerification<String> verification, final Method rule, final String knownFailure)
        throws Throwable {
        verification.setUp();
        try {
            rule.invoke(verification);
        } catch (final InvocationTargetException ex) {
            final Throwable cause = ex.getCause();
            if (cause instanceof org.testng.SkipException) {
                Assumptions.abort("RS TCK skipped " + rule.getName() + ": " + cause.getMessage());
            }
            if (knownFailure != null) {
                final String message = "KNOWN FAILURE of RS TCK rule " + rule.getName() + " on this fixture (" + knownFailure
                    + "), reported as skipped, not passed: " + cause;
                System.err.println(message);
                Assumptions.abort(message);
            }
            throw cause;
        }
    }

    // ------------------------------------------------------------------------------------------------ helpers

    private void awaitConnected(final BusPublication<?> pub) throws InterruptedException {
        final long deadlineNs = System.nanoTime() + connectTimeout.toNanos();
        while (!pub.isConnected()) {
            assertTrue(System.nanoTime() < deadlineNs, "publication to " + pub.topic().name() + " not connected within " + connectTimeout);
            Thread.sleep(5);
        }
    }

    /** Publishes probes on {@code pub} until every recorder has received one from its session. */
    private void awaitProbes(final BusPublication<String> pub, final List<Recorder<String>> recs) throws InterruptedException {
        final Predicate<Received<String>> isProbe = r -> r.sessionId() == pub.sessionId() && PROBE.equals(r.value());
        final long deadlineNs = System.nanoTime() + connectTimeout.toNanos();
        while (!recs.stream().allMatch(rec -> rec.count(isProbe) > 0)) {
            assertTrue(System.nanoTime() < deadlineNs, "probes on " + pub.topic().name() + " did not reach every subscriber within "
                + connectTimeout);
            final int status = pub.offer(PROBE);
            assertTrue(status != PublishStatus.CLOSED && status != PublishStatus.MESSAGE_TOO_LARGE, "probe offer: "
                + PublishStatus.describe(status));
            Thread.sleep(20);
        }
    }

    private static int probes(final Recorder<String> rec) {
        return (int) rec.count(r -> PROBE.equals(r.value()));
    }

    private static List<Received<String>> notProbes(final List<Received<String>> list) {
        return list.stream().filter(r -> !PROBE.equals(r.value())).toList();
    }

    private <T> void offerUntilTaken(final BusPublication<T> pub, final T value) {
        final long deadlineNs = System.nanoTime() + deliveryTimeout.toNanos();
        while (true) {
            final int status = pub.offer(value);
            if (status == PublishStatus.OK) {
                return;
            }
            if (status != PublishStatus.BACK_PRESSURED && status != PublishStatus.NOT_CONNECTED) {
                fail("offer to " + pub.topic().name() + " returned " + PublishStatus.describe(status));
            }
            if (System.nanoTime() >= deadlineNs) {
                fail("offer to " + pub.topic().name() + " not taken within " + deliveryTimeout + ", last status "
                    + PublishStatus.describe(status));
            }
            LockSupport.parkNanos(OFFER_RETRY_PAUSE_NS);
        }
    }

    private void sendBatch(final BusPublication<String> pub, final String prefix, final int n) {
        for (int i = 0; i < n; i++) {
            offerUntilTaken(pub, prefix + "-" + i);
        }
    }

    private void awaitBatch(final Recorder<String> rec, final BusPublication<String> pub, final String prefix, final int n)
        throws InterruptedException {
        final Predicate<Received<String>> mine = r -> r.sessionId() == pub.sessionId() && r.value().startsWith(prefix + "-");
        assertTrue(rec.awaitUntil(list -> list.stream().filter(mine).count() >= n, deliveryTimeout),
            "batch " + prefix + ": received " + rec.count(mine) + " of " + n);
        final List<Received<String>> got = rec.received().stream().filter(mine).toList();
        assertEquals(IntStream.range(0, n).mapToObj(i -> prefix + "-" + i).toList(), got.stream().map(Received::value).toList(),
            "batch " + prefix + ": values or order differ");
        assertTrue(got.stream().allMatch(r -> r.lostBefore() == 0), "batch " + prefix + " reported loss");
    }

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

    private static byte[] randomBytes(final int length) {
        final byte[] bytes = new byte[length];
        ThreadLocalRandom.current().nextBytes(bytes);
        return bytes;
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
