package io.rdmabus.tck;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import io.rdmabus.Bus;
import io.rdmabus.BusException;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.codec.Codec;
import io.rdmabus.codecs.Codecs;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

import reactor.core.publisher.Mono;

/**
 * Cases of the transport compatibility kit about coming and going: subscriber and publisher restarts, a bus's
 * {@code close()} releasing everything, and the reactive-streams TCK's publisher rules against the subscribe
 * {@code Flux}. Part of {@link TransportTck}, which a transport's test extends.
 */
public abstract class LifecycleTck extends FlowControlTck {

    LifecycleTck() {
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
     * A publication closed by another thread while its publisher offers: from then on the publisher's offers answer
     * CLOSED (never "used by two threads at once"; an offer in progress finishes and closes the publication as it
     * returns), and every message taken before that reaches the subscriber, in order, with no loss reported.
     */
    @Test
    @ScaledTimeout(40)
    void closeWhileAnotherThreadOffers() throws InterruptedException {
        final Bus pubBus = bus("close-race-pub"); // first: with a split fixture the publication under test is local
        final Topic<String> topic = topic("close-race", Delivery.RELIABLE);
        final Recorder<String> rec = subscribe(bus("close-race-sub"), topic, SubscribeOptions.defaults());
        final BusPublication<String> pub = publication(pubBus, topic);
        awaitProbes(pub, List.of(rec));

        final AtomicInteger taken = new AtomicInteger();
        final AtomicReference<Throwable> offerFailure = new AtomicReference<>();
        final AtomicInteger lastStatus = new AtomicInteger(PublishStatus.OK);
        final Thread publisher = new Thread(() -> {
            try {
                for (int status = PublishStatus.OK; status != PublishStatus.CLOSED;) {
                    status = pub.offer("race-" + taken.get());
                    if (status == PublishStatus.OK) {
                        taken.incrementAndGet();
                    } else {
                        lastStatus.set(status);
                        Thread.onSpinWait();
                    }
                }
            } catch (final Throwable ex) {
                offerFailure.set(ex);
            }
        }, "tck-close-race-publisher");
        publisher.start();
        final Duration bound = deliveryTimeout;
        await("500 messages taken by the publication").atMost(bound).until(() -> taken.get() >= 500 || !publisher.isAlive());
        pub.close();
        publisher.join(bound.toMillis());
        assertFalse(publisher.isAlive(), "the publisher's offers still did not answer CLOSED " + bound + " after close() returned"
            + " (last status " + PublishStatus.describe(lastStatus.get()) + ")");
        assertNull(offerFailure.get(), () -> "an offer failed while another thread closed the publication: " + offerFailure.get());
        assertEquals(PublishStatus.CLOSED, pub.offer("late"), "offer after close()");

        awaitBatch(rec, pub, "race", taken.get()); // every message offered before close(), in order, no loss reported
    }

    /**
     * A publication closed from inside its own offer (its codec's encode): {@code close()} does not wait for the offer
     * it is part of; that offer sends its message and closes the publication as it returns.
     */
    @Test
    @ScaledTimeout(40)
    void closeFromInsideTheOwnOffer() throws InterruptedException {
        final AtomicReference<BusPublication<String>> self = new AtomicReference<>();
        final Codec<String> utf8 = Codecs.utf8();
        final Codec<String> closing = new Codec<>() {
            @Override
            public int encodedLength(final String value) {
                return utf8.encodedLength(value);
            }

            @Override
            public void encode(final String value, final MutableDirectBuffer buffer, final int offset) {
                if (value.equals("closes")) {
                    self.get().close();
                }
                utf8.encode(value, buffer, offset);
            }

            @Override
            public String decode(final DirectBuffer buffer, final int offset, final int length) {
                return utf8.decode(buffer, offset, length);
            }

            @Override
            public String name() {
                return "utf8, closing its publication on \"closes\"";
            }
        };
        // the publisher's bus first (with a split fixture it is the local one, where this codec lives); the subscriber
        // decodes the same topic with the plain codec, which a remote bus host can recreate
        final Bus pubBus = bus("close-self-pub");
        final Topic<String> plain = topic("close-self", Delivery.RELIABLE);
        final Recorder<String> rec = subscribe(bus("close-self-sub"), plain, SubscribeOptions.defaults());
        final BusPublication<String> pub = publication(pubBus, Topic.of(plain.name(), closing, Delivery.RELIABLE));
        self.set(pub);
        awaitProbes(pub, List.of(rec));
        assertEquals(PublishStatus.OK, pub.offer("closes"), "the offer that closed its publication");
        assertEquals(PublishStatus.CLOSED, pub.offer("late"), "offer after the close");
        assertTrue(rec.awaitUntil(list -> list.stream().anyMatch(r -> r.value().equals("closes")), deliveryTimeout),
            "the message whose offer closed the publication did not arrive");
    }

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
                () -> runRule(verification, m, fixture.knownReactiveStreamsFailures().get(m.getName()), pubBus, subBus),
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

    private static void runRule(final BusPublisherVerification verification, final Method rule, final String knownFailure,
                                final Bus pubBus, final Bus subBus) throws Throwable {
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
            // what the publishers were doing, with times, and both buses' stats: a rule's own timeout says only what it missed
            throw new AssertionError(cause.getMessage() + "; last events " + verification.recentEvents() + "; publisher bus "
                + pubBus.stats() + "; subscriber bus " + subBus.stats(), cause);
        }
    }

    // ------------------------------------------------------------------------------------------------ helpers

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
}
