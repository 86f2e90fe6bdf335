package io.rdmabus.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.FrameClaim;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import reactor.core.Disposable;

/**
 * What every case of the transport compatibility kit stands on: the fixture's lifecycle (one per test class), the case
 * bounds scaled by the fixture's time factor, the resources a case opens and the kit closes after it, and the helpers
 * the cases share (buses, topics, subscriptions, probes, offers, stats, raw frame injection). The cases are in
 * {@link HostileFrameTck}, {@link DeliveryTck}, {@link FlowControlTck} and {@link LifecycleTck}, each extending the one
 * before; a transport's test extends {@link TransportTck}, the last of the chain, which runs them all.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(ScaledTimeoutExtension.class)
@ScaledTimeout(45)
public abstract class TckBase implements ScaledTimeoutExtension.TimeScaled {
    /** Prefix every bus and transport thread name carries. */
    public static final String THREAD_PREFIX = "rdma-bus-";
    static final String PROBE = "probe";
    static final long OFFER_RETRY_PAUSE_NS = 50_000;
    private static final Duration BASE_CONNECT_TIMEOUT = Duration.ofSeconds(15);
    private static final Duration BASE_DELIVERY_TIMEOUT = Duration.ofSeconds(20);

    final String runId = Integer.toHexString(ThreadLocalRandom.current().nextInt() & 0xFFFFFF);
    final AtomicInteger names = new AtomicInteger();
    final List<AutoCloseable> toClose = Collections.synchronizedList(new ArrayList<>());
    private Set<Thread> threadsBeforeFixture = Set.of();
    TckFixture fixture;
    private double timeFactor = 1.0;
    /** Connect bound (probes, first frame), times the fixture's time factor. */
    Duration connectTimeout = BASE_CONNECT_TIMEOUT;
    /** Delivery bound (a publish, a batch to arrive), times the fixture's time factor. */
    Duration deliveryTimeout = BASE_DELIVERY_TIMEOUT;

    TckBase() {
    }

    /** @return a new fixture for the transport configuration under test; the kit closes it after the class */
    protected abstract TckFixture createFixture();

    /** @return the fixture in use (created once per test class) */
    protected final TckFixture fixture() {
        return fixture;
    }

    @BeforeAll
    final void startFixture() {
        threadsBeforeFixture = liveThreads(name -> name.startsWith(THREAD_PREFIX));
        fixture = createFixture();
        assertTrue(fixture != null, "createFixture() returned null");
        timeFactor = fixture.timeFactor();
        assertTrue(timeFactor >= 1.0 && Double.isFinite(timeFactor), "fixture.timeFactor() must be a finite number >= 1: " + timeFactor);
        connectTimeout = scaled(BASE_CONNECT_TIMEOUT);
        deliveryTimeout = scaled(BASE_DELIVERY_TIMEOUT);
        if (timeFactor != 1.0) {
            System.err.println("TCK: time bounds x " + timeFactor + " for " + fixture.name());
        }
    }

    @BeforeEach
    final void announceCase(final TestInfo info) {
        fixture.beforeCase(info.getTestMethod().map(Method::getName).orElse(info.getDisplayName()));
    }

    @AfterEach
    final void closeCaseResources() {
        final List<AutoCloseable> copy;
        synchronized (toClose) {
            copy = new ArrayList<>(toClose);
            toClose.clear();
        }
        Collections.reverse(copy);
        for (final AutoCloseable closeable : copy) {
            try {
                closeable.close();
            } catch (final Exception ex) {
                throw new AssertionError("closing " + closeable + " after the case failed", ex);
            }
        }
    }

    @AfterAll
    final void closeFixture() throws InterruptedException {
        if (fixture == null) {
            return;
        }
        fixture.close();
        final Duration threadsGone = scaled(Duration.ofSeconds(10));
        final Set<Thread> left = awaitThreadsGone(t -> t.getName().startsWith(THREAD_PREFIX) && !threadsBeforeFixture.contains(t),
            threadsGone);
        assertTrue(left.isEmpty(), "threads still alive " + threadsGone + " after every bus and the fixture (" + fixture.name() + ") closed: "
            + names(left));
    }

    /** @return the fixture's {@link TckFixture#timeFactor()} (1 until the fixture exists) */
    @Override
    public final double timeFactor() {
        return timeFactor;
    }

    /** @param bound a time bound of the kit @return it times the fixture's time factor */
    final Duration scaled(final Duration bound) {
        return ScaledTimeoutExtension.scale(bound, timeFactor);
    }

    /**
     * @param role short role for the name
     * @return a new bus of the fixture, closed after the case
     */
    protected final Bus bus(final String role) {
        final Bus bus = fixture.newBus("tck-" + role + "-" + runId + "-" + names.incrementAndGet());
        toClose.add(bus);
        return bus;
    }

    final Topic<String> topic(final String base, final Delivery delivery) {
        return topic(base, Codecs.utf8(), delivery);
    }

    final <T> Topic<T> topic(final String base, final io.rdmabus.codec.Codec<T> codec, final Delivery delivery) {
        return Topic.of("tck." + base + "." + runId + "." + names.incrementAndGet(), codec, delivery);
    }

    final <T> BusPublication<T> publication(final Bus bus, final Topic<T> topic) {
        final BusPublication<T> pub = bus.publication(topic);
        toClose.add(pub);
        return pub;
    }

    final <T> Recorder<T> subscribe(final Bus bus, final Topic<T> topic, final SubscribeOptions<T> options) {
        return subscribe(bus, topic, options, Recorder.unbounded());
    }

    final <T> Recorder<T> subscribe(final Bus bus, final Topic<T> topic, final SubscribeOptions<T> options, final Recorder<T> rec) {
        bus.subscribeReceived(topic, options).subscribe(rec);
        final Disposable d = rec;
        toClose.add(d::dispose);
        return rec;
    }

    final void awaitConnected(final BusPublication<?> pub) throws InterruptedException {
        final long deadlineNs = System.nanoTime() + connectTimeout.toNanos();
        while (!pub.isConnected()) {
            assertTrue(System.nanoTime() < deadlineNs, "publication to " + pub.topic().name() + " not connected within " + connectTimeout);
            Thread.sleep(5);
        }
    }

    /** Publishes probes on {@code pub} until every recorder has received one from its session. */
    final void awaitProbes(final BusPublication<String> pub, final List<Recorder<String>> recs) throws InterruptedException {
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

    final <T> void offerUntilTaken(final BusPublication<T> pub, final T value) {
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

    static SubscriptionStats statsOf(final Bus bus, final Topic<?> topic) {
        return bus.stats().subscriptions().stream().filter(s -> s.topic().equals(topic.name())).findFirst()
            .orElseThrow(() -> new AssertionError("no live subscription for " + topic.name() + " in " + bus.stats()));
    }

    /** Commits {@code frame} as is through a raw transport publication, retrying a claim that is not possible yet. */
    final void inject(final TransportPublication pub, final byte[] frame) {
        final long deadlineNs = System.nanoTime() + deliveryTimeout.toNanos();
        while (true) {
            final int status = pub.tryClaim(frame.length);
            if (status == TransportStatus.OK) {
                final FrameClaim claim = pub.claim();
                assertEquals(frame.length, claim.length(), "claim length");
                claim.buffer().putBytes(claim.offset(), frame);
                claim.commit();
                return;
            }
            if (status == TransportStatus.CLOSED || status == TransportStatus.FRAME_TOO_LARGE) {
                fail("raw tryClaim(" + frame.length + ") returned " + TransportStatus.describe(status));
            }
            if (System.nanoTime() >= deadlineNs) {
                fail("raw tryClaim not OK within " + deliveryTimeout + ": " + TransportStatus.describe(status));
            }
            LockSupport.parkNanos(OFFER_RETRY_PAUSE_NS);
        }
    }

    /** @return a frame with a valid header over {@code payload}'s UTF-8 bytes */
    static byte[] frame(final int topicId, final int flags, final int sessionId, final long sequence, final String payload) {
        return frame(topicId, flags, sessionId, sequence, payload.getBytes(StandardCharsets.UTF_8));
    }

    static byte[] frame(final int topicId, final int flags, final int sessionId, final long sequence, final byte[] payload) {
        final byte[] bytes = new byte[FrameHeader.LENGTH + payload.length];
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        FrameHeader.write(buffer, 0, flags, bytes.length, topicId, sessionId, sequence, System.currentTimeMillis() * 1_000_000L);
        buffer.putBytes(FrameHeader.LENGTH, payload);
        return bytes;
    }

    static Set<Thread> liveThreads(final Predicate<String> name) {
        final Set<Thread> result = new HashSet<>();
        for (final Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && name.test(t.getName())) {
                result.add(t);
            }
        }
        return result;
    }

    static Set<Thread> liveThreadsMatching(final Predicate<Thread> which) {
        final Set<Thread> result = new HashSet<>();
        for (final Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && which.test(t)) {
                result.add(t);
            }
        }
        return result;
    }

    static Set<Thread> awaitThreadsGone(final Predicate<Thread> which, final Duration timeout) throws InterruptedException {
        final long deadlineNs = System.nanoTime() + timeout.toNanos();
        Set<Thread> left = liveThreadsMatching(which);
        while (!left.isEmpty() && System.nanoTime() < deadlineNs) {
            Thread.sleep(20);
            left = liveThreadsMatching(which);
        }
        return left;
    }

    static List<String> names(final Set<Thread> threads) {
        return threads.stream().map(Thread::getName).sorted().toList();
    }
}
