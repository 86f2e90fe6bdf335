package io.rdmabus.tck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.ToLongFunction;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import io.rdmabus.Bus;
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

import org.junit.jupiter.api.Test;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Cases of the transport compatibility kit about what arrives: one to one on either delivery, many topics at once
 * without cross-talk, fan-out to several buses, and messages larger than a frame. Part of {@link TransportTck}, which a
 * transport's test extends.
 */
public abstract class DeliveryTck extends HostileFrameTck {
    /** 2020-01-01 in epoch ns: a frame stamped by the publisher's clock is later (two guests have clocks of their own). */
    private static final long YEAR_2020_EPOCH_NS = 1_577_836_800L * 1_000_000_000L;

    DeliveryTck() {
    }

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

    /**
     * {@code BusPublication.offer(values, offset, length)}: a reliable stream sent in batches arrives whole and in order,
     * as single offers would send it; each call takes part of its range or answers why it took nothing, and the values
     * one call took carry one timestamp. An empty range takes nothing, a range outside the array is refused, and a
     * closed publication answers CLOSED.
     */
    @Test
    @ScaledTimeout(30)
    void batchOffersDeliverTheirRangeInOrderAndSayHowManyTheyTook() throws InterruptedException {
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");
        final Topic<String> topic = topic("batch", Delivery.RELIABLE);
        final Recorder<String> rec = subscribe(subBus, topic, SubscribeOptions.defaults());
        final BusPublication<String> pub = publication(pubBus, topic);
        awaitConnected(pub);
        final int n = 10_000;
        final int batch = 64;
        // one value on either side of the range [1, n] that no call may send
        final String[] values = IntStream.range(0, n + 2).mapToObj(i -> "b-" + i).toArray(String[]::new);
        final long deadlineNs = System.nanoTime() + deliveryTimeout.toNanos();
        int sent = 0;
        final List<int[]> calls = new ArrayList<>(); // {index of the call's first value among those sent, how many it took}
        while (sent < n) {
            final int asked = Math.min(batch, n - sent);
            final int taken = pub.offer(values, 1 + sent, asked);
            assertTrue(taken <= asked, "took " + taken + " of " + asked);
            if (taken > 0) {
                calls.add(new int[] {sent, taken});
                sent += taken;
                continue;
            }
            assertTrue(taken == PublishStatus.BACK_PRESSURED || taken == PublishStatus.NOT_CONNECTED,
                () -> "a batch took nothing: " + PublishStatus.describe(taken));
            assertTrue(System.nanoTime() < deadlineNs, "sent " + sent + " of " + n + " within " + deliveryTimeout);
            LockSupport.parkNanos(OFFER_RETRY_PAUSE_NS);
        }
        assertTrue(rec.awaitCount(n, deliveryTimeout), () -> "received " + rec.count() + " of " + n);
        assertEquals(IntStream.rangeClosed(1, n).mapToObj(i -> "b-" + i).toList(), rec.received().stream().map(Received::value).toList(),
            "values or order differ");
        assertTrue(rec.received().stream().allMatch(r -> r.lostBefore() == 0 && r.sessionId() == pub.sessionId()), "loss or another session");
        for (final int[] call : calls) {
            final List<Long> stamps = rec.received().subList(call[0], call[0] + call[1]).stream().map(Received::timestampNs).distinct().toList();
            assertTrue(stamps.size() == 1 && stamps.get(0) > YEAR_2020_EPOCH_NS,
                () -> "the " + call[1] + " values from b-" + (1 + call[0]) + " that one call took carry " + stamps.size()
                    + " timestamps, from " + stamps.get(0) + " to " + stamps.get(stamps.size() - 1));
        }
        assertEquals(0, pub.offer(values, 0, 0), "an empty range");
        assertThrows(IndexOutOfBoundsException.class, () -> pub.offer(values, n, 3));
        pub.close();
        assertEquals(PublishStatus.CLOSED, pub.offer(values, 0, 1));
    }

    /**
     * Every frame carries the publisher's wall clock (epoch ns, after 2020: the hosts of a two-guest run have clocks of
     * their own, so nothing tighter), unless the topic is {@code withoutTimestamps()}: then every message says 0.
     */
    @Test
    @ScaledTimeout(30)
    void framesCarryThePublishersClockUnlessTheTopicLeavesItOut() throws InterruptedException {
        final Bus pubBus = bus("pub");
        final Bus subBus = bus("sub");
        final Topic<String> stamped = topic("stamped", Delivery.RELIABLE);
        final Topic<String> unstamped = topic("unstamped", Delivery.RELIABLE).withoutTimestamps();
        final Recorder<String> stampedRec = subscribe(subBus, stamped, SubscribeOptions.defaults());
        final Recorder<String> unstampedRec = subscribe(subBus, unstamped, SubscribeOptions.defaults());
        final int n = 100;
        final List<String> values = IntStream.range(0, n).mapToObj(i -> "t-" + i).toList();
        pubBus.publish(stamped, Flux.fromIterable(values)).block(deliveryTimeout);
        pubBus.publish(unstamped, Flux.fromIterable(values)).block(deliveryTimeout);
        assertTrue(stampedRec.awaitCount(n, deliveryTimeout), () -> "stamped topic: received " + stampedRec.count() + " of " + n);
        assertTrue(unstampedRec.awaitCount(n, deliveryTimeout), () -> "unstamped topic: received " + unstampedRec.count() + " of " + n);
        for (final Received<String> r : stampedRec.received()) {
            assertTrue(r.timestampNs() > YEAR_2020_EPOCH_NS, () -> "stamped message " + r.value() + " has timestamp " + r.timestampNs());
        }
        for (final Received<String> r : unstampedRec.received()) {
            assertEquals(0, r.timestampNs(), () -> "message " + r.value() + " of a topic without timestamps has timestamp " + r.timestampNs());
        }
        assertEquals(values, unstampedRec.received().stream().map(Received::value).toList(), "values or order differ without timestamps");
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

    // ------------------------------------------------------------------------------------------------ same bus

    /**
     * RELIABLE loopback: a publication and a subscription of one topic in the same bus see each other, next to a
     * subscriber on another bus. Both get every value once, in order, with consecutive sequences (no gap, no
     * duplicate), including a message several frames long.
     */
    @Test
    @ScaledTimeout(30)
    void sameBusReliableLoopbackDeliversOnceInOrder() throws InterruptedException {
        final int maxFrame;
        try (Transport raw = fixture.newRawTransport()) {
            maxFrame = raw.capabilities().maxReliableFrameLength();
        }
        final Bus bus = bus("loop");
        final Bus remoteBus = bus("remote");
        final Topic<String> topic = topic("loop-r", Delivery.RELIABLE);
        final Recorder<String> local = subscribe(bus, topic, SubscribeOptions.defaults());
        final Recorder<String> remote = subscribe(remoteBus, topic, SubscribeOptions.defaults());
        final BusPublication<String> pub = publication(bus, topic);
        awaitProbes(pub, List.of(local, remote));
        final int n = 2_000;
        final List<String> expected = new ArrayList<>(IntStream.range(0, n).mapToObj(i -> "m-" + i).toList());
        expected.add("big-" + "x".repeat(2 * maxFrame + 17)); // three frames or more, reassembled on the remote side
        expected.add("last");
        for (final String value : expected) {
            offerUntilTaken(pub, value);
        }
        assertEquals(PublishStatus.OK, flushUntilDone(pub), "flush of the fragmented message");
        for (final Recorder<String> rec : List.of(local, remote)) {
            final String who = rec == local ? "same-bus subscriber" : "other-bus subscriber";
            assertTrue(rec.awaitUntil(list -> notProbes(list).size() >= expected.size(), deliveryTimeout),
                who + " received " + notProbes(rec.received()).size() + " of " + expected.size());
            final List<Received<String>> got = notProbes(rec.received());
            assertEquals(expected, got.stream().map(Received::value).toList(), who + ": values or order differ");
            assertTrue(got.stream().allMatch(r -> r.sessionId() == pub.sessionId() && r.lostBefore() == 0),
                who + ": loss reported or foreign session");
            for (int i = 1; i < n; i++) {
                assertEquals(got.get(i - 1).sequence() + 1, got.get(i).sequence(), who + ": sequence gap or duplicate at " + i);
            }
        }
        Thread.sleep(200); // a duplicate delivered late would show now
        assertEquals(expected.size(), notProbes(local.received()).size(), "the same-bus subscriber got duplicates");
        assertEquals(0, statsOf(bus, topic).duplicates(), "duplicates counted: " + statsOf(bus, topic));
        assertNull(local.error());
    }

    /** BEST_EFFORT loopback in a bus with nobody else: every value once and in order, no loss reported. */
    @Test
    @ScaledTimeout(20)
    void sameBusBestEffortLoopbackDeliversOnceInOrder() throws InterruptedException {
        final Bus bus = bus("loop");
        final Topic<String> topic = topic("loop-be", Delivery.BEST_EFFORT);
        final Recorder<String> local = subscribe(bus, topic, SubscribeOptions.<String>defaults().withRingSize(4096));
        final BusPublication<String> pub = publication(bus, topic);
        awaitProbes(pub, List.of(local));
        final int n = 1_000;
        for (int i = 0; i < n; i++) {
            offerUntilTaken(pub, "m-" + i);
        }
        assertTrue(local.awaitUntil(list -> notProbes(list).size() >= n, deliveryTimeout),
            "received " + notProbes(local.received()).size() + " of " + n);
        Thread.sleep(200); // a duplicate delivered late would show now
        final List<Received<String>> got = notProbes(local.received());
        assertEquals(IntStream.range(0, n).mapToObj(i -> "m-" + i).toList(), got.stream().map(Received::value).toList(),
            "values or order differ, or duplicates");
        assertTrue(got.stream().allMatch(r -> r.sessionId() == pub.sessionId() && r.lostBefore() == 0), "loss reported");
    }

    /**
     * RELIABLE loopback to a subscriber that requests nothing: the publication is held back (its offers answer
     * BACK_PRESSURED, within the ring plus what the transport buffers), and once the subscriber asks, everything
     * arrives once and in order.
     */
    @Test
    @ScaledTimeout(30)
    void sameBusSlowReliableSubscriberHoldsThePublisher() throws InterruptedException {
        final Bus bus = bus("loop");
        final Topic<String> topic = topic("loop-slow", Delivery.RELIABLE);
        final int ring = 16;
        final Recorder<String> local = subscribe(bus, topic, SubscribeOptions.<String>defaults().withRingSize(ring), Recorder.manual());
        final BusPublication<String> pub = publication(bus, topic);
        awaitConnected(pub);
        final String pad = "p".repeat(100);
        final long bound = ring + fixture.maxBufferedReliableBytes() / (FrameHeader.LENGTH + pad.length());
        int taken = 0;
        long heldSinceNs = -1;
        while (true) {
            final int status = pub.offer(taken + pad);
            if (status == PublishStatus.OK) {
                taken++;
                heldSinceNs = -1;
                assertTrue(taken <= bound, "the publisher ran " + taken + " messages ahead of a subscriber that requested none");
                continue;
            }
            assertTrue(status == PublishStatus.BACK_PRESSURED, "offer: " + PublishStatus.describe(status));
            if (heldSinceNs < 0) {
                heldSinceNs = System.nanoTime();
            } else if (System.nanoTime() - heldSinceNs > Duration.ofMillis(300).toNanos()) {
                break; // held back for good
            }
            Thread.sleep(1);
        }
        assertTrue(taken >= 1, "nothing was taken before back-pressure");
        local.request(Long.MAX_VALUE);
        offerUntilTaken(pub, "after");
        final int total = taken + 1;
        assertTrue(local.awaitCount(total, deliveryTimeout), "received " + local.count() + " of " + total);
        final List<String> expected = new ArrayList<>(IntStream.range(0, taken).mapToObj(i -> i + pad).toList());
        expected.add("after");
        Thread.sleep(200); // a duplicate delivered late would show now
        assertEquals(expected, local.values(), "values or order differ, or duplicates");
        assertTrue(local.received().stream().allMatch(r -> r.lostBefore() == 0), "loss reported on a reliable topic");
    }

    /**
     * RELIABLE, one subscription fed at once by two publications of its own bus (two threads) and one of another bus:
     * every session's values arrive whole, once and in order, under one session id each, with consecutive sequences
     * and no loss reported. The ring is small (64 slots), so that full rings and held-back publishers are likely on the
     * way, and the same-bus messages and the transport's wait side by side.
     */
    @Test
    @ScaledTimeout(40)
    void sameBusAndRemotePublishersTogetherKeepEverySessionWholeAndInOrder() throws InterruptedException {
        final Bus bus = bus("loop");
        final Bus remoteBus = bus("remote");
        final Topic<String> topic = topic("loop-mixed", Delivery.RELIABLE);
        final Recorder<String> rec = subscribe(bus, topic, SubscribeOptions.<String>defaults().withRingSize(64));
        final int n = 2_000;
        final List<String> sources = List.of("same-a", "same-b", "remote");
        Flux.fromIterable(sources)
            .flatMap(source -> (source.equals("remote") ? remoteBus : bus)
                .publish(topic, Flux.range(0, n).map(i -> source + "-" + i))
                .subscribeOn(Schedulers.boundedElastic()), sources.size())
            .then()
            .block(scaled(Duration.ofSeconds(30)));
        assertTrue(rec.awaitCount(sources.size() * n, deliveryTimeout), "received " + rec.count() + " of " + sources.size() * n);
        for (final String source : sources) {
            final List<Received<String>> got = rec.received().stream().filter(r -> r.value().startsWith(source + "-")).toList();
            assertEquals(IntStream.range(0, n).mapToObj(i -> source + "-" + i).toList(), got.stream().map(Received::value).toList(),
                source + ": values or order differ, or duplicates");
            assertTrue(got.stream().allMatch(r -> r.sessionId() == got.get(0).sessionId() && r.lostBefore() == 0),
                source + ": more than one session, or loss reported on a reliable topic");
            for (int i = 1; i < n; i++) {
                assertEquals(got.get(i - 1).sequence() + 1, got.get(i).sequence(), source + ": sequence gap or duplicate at " + i);
            }
        }
        assertEquals(sources.size() * n, rec.count(), "values of no source, or extra ones");
        assertNull(rec.error());
    }

    // ------------------------------------------------------------------------------------------------ late join

    /**
     * Late join with a last-value cache: a publisher sends updates over K keys (to an early subscriber), then goes on
     * publishing while a subscriber on a third bus joins. The late subscriber first gets exactly one value per key, each
     * the latest the publisher had sent at the snapshot's last sequence, then the live stream from the next sequence on:
     * no gap, no duplicate at the seam, sequences consecutive to the end.
     */
    @Test
    @ScaledTimeout(30)
    void lateJoinGetsTheLastValuePerKeyThenTheLiveStream() throws Exception {
        final int keys = 20;
        final int before = 400;
        final int afterSeam = 300;
        // serializable: a split fixture sends the topic, key included, to the bus host of the other process
        final Topic<String> topic = topic("lvc", Delivery.RELIABLE)
            .withLastValueCache((ToLongFunction<String> & Serializable) DeliveryTck::keyOf, 64);
        final Bus pubBus = bus("pub");
        final Bus lateBus = bus("late"); // created before the early bus: a split fixture puts it on the other side of pub
        final Bus earlyBus = bus("early");
        final Recorder<String> early = subscribe(earlyBus, topic, SubscribeOptions.defaults());
        final BusPublication<String> pub = publication(pubBus, topic);
        for (int i = 0; i < before; i++) {
            offerUntilTaken(pub, "k" + (i % keys) + "-" + i); // message i has sequence i: one frame each, no probes
        }
        assertTrue(early.awaitCount(before, deliveryTimeout), "early subscriber received " + early.count() + " of " + before);
        // the live stream runs across the join, until the late subscriber is past its snapshot, then 300 more
        final Recorder<String> late = Recorder.unbounded();
        final AtomicInteger published = new AtomicInteger(before);
        final long liveDeadlineNs = System.nanoTime() + deliveryTimeout.toNanos();
        final Thread live = new Thread(() -> {
            int sinceSeam = 0;
            for (int i = before; sinceSeam < afterSeam && System.nanoTime() < liveDeadlineNs; i++) {
                offerUntilTaken(pub, "k" + (i % keys) + "-" + i);
                published.set(i + 1);
                sinceSeam += late.count() > keys ? 1 : 0;
                LockSupport.parkNanos(1_000_000);
            }
        }, "tck-lvc-publisher");
        live.start();
        subscribe(lateBus, topic, SubscribeOptions.defaults(), late);
        live.join(scaled(Duration.ofSeconds(25)).toMillis());
        assertTrue(!live.isAlive(), "the live publisher did not finish");
        final long last = published.get() - 1;
        assertTrue(late.awaitUntil(list -> !list.isEmpty() && list.get(list.size() - 1).sequence() == last, deliveryTimeout),
            "late subscriber did not reach the last sequence " + last + ": " + describe(late.received()));
        final List<Received<String>> got = late.received();
        assertTrue(got.size() > keys, "late subscriber got only " + got.size() + " messages: " + describe(got));
        final List<Received<String>> snapshot = got.subList(0, keys);
        assertEquals(keys, snapshot.stream().map(r -> keyOf(r.value())).distinct().count(),
            "the first " + keys + " messages are not one per key: " + describe(snapshot));
        final long snapshotSequence = snapshot.get(keys - 1).sequence();
        for (int k = 0; k < keys; k++) {
            final Received<String> r = snapshot.get(k);
            final long latest = snapshotSequence - Math.floorMod(snapshotSequence - keyOf(r.value()), keys);
            assertEquals(latest, r.sequence(), "key " + keyOf(r.value()) + " is not its latest value at the snapshot's sequence "
                + snapshotSequence);
            assertEquals("k" + keyOf(r.value()) + "-" + latest, r.value(), "snapshot value of sequence " + r.sequence());
            assertTrue(k == 0 || r.sequence() > snapshot.get(k - 1).sequence(), "snapshot values not in publish order");
        }
        final long firstLive = got.get(keys).sequence();
        System.out.println("TCK late join on " + fixture.name() + ": last snapshot sequence " + snapshotSequence
            + ", first live sequence " + firstLive + ", last " + got.get(got.size() - 1).sequence());
        assertEquals(snapshotSequence + 1, firstLive, "seam: a gap or a duplicate between the snapshot and the live stream");
        for (int i = keys; i < got.size(); i++) {
            final Received<String> r = got.get(i);
            assertEquals(snapshotSequence + 1 + (i - keys), r.sequence(), "live stream not consecutive at " + i);
            assertEquals("k" + (r.sequence() % keys) + "-" + r.sequence(), r.value(), "live value of sequence " + r.sequence());
            assertEquals(pub.sessionId(), r.sessionId(), "foreign session");
            assertEquals(0, r.lostBefore(), "loss reported at " + r.sequence());
        }
        assertNull(late.error());
        assertTrue(snapshotSequence >= before - 1, "the snapshot predates what the publisher had sent before the join: " + snapshotSequence);
    }

    private static long keyOf(final String value) {
        return Long.parseLong(value.substring(1, value.indexOf('-')));
    }

    private static String describe(final List<Received<String>> list) {
        final int n = list.size();
        return n + " messages, first " + list.subList(0, Math.min(3, n)).stream().map(r -> r.sequence() + "=" + r.value()).toList()
            + ", last " + list.subList(Math.max(0, n - 3), n).stream().map(r -> r.sequence() + "=" + r.value()).toList();
    }

    private static int flushUntilDone(final BusPublication<String> pub) throws InterruptedException {
        int status = pub.flush();
        for (int i = 0; i < 10_000 && status == PublishStatus.BACK_PRESSURED; i++) {
            Thread.sleep(1);
            status = pub.flush();
        }
        return status;
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

    // ------------------------------------------------------------------------------------------------ helpers

    private static int probes(final Recorder<String> rec) {
        return (int) rec.count(r -> PROBE.equals(r.value()));
    }

    private static List<Received<String>> notProbes(final List<Received<String>> list) {
        return list.stream().filter(r -> !PROBE.equals(r.value())).toList();
    }

    private static byte[] randomBytes(final int length) {
        final byte[] bytes = new byte[length];
        ThreadLocalRandom.current().nextBytes(bytes);
        return bytes;
    }
}
