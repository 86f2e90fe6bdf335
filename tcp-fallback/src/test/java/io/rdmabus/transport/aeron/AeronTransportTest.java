package io.rdmabus.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.aeron.Aeron;
import io.aeron.CommonContext;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.driver.status.ReceiveChannelStatus;
import io.rdmabus.Bus;
import io.rdmabus.BusConfigurationException;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.IdleStrategies;
import io.rdmabus.Topic;
import io.rdmabus.TransportException;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.FrameClaim;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportFactory;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;
import io.rdmabus.spi.TransportSubscription;

import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import reactor.core.publisher.Flux;

/** Transport-level tests of the Aeron transport on real media drivers (no mocks). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AeronTransportTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String PROBE = "probe";

    // ------------------------------------------------------------------------------------------------ configuration

    @Test
    void unknownPropertyIsRejectedListingTheKnownKeys() {
        final var ex = assertThrows(BusConfigurationException.class,
            () -> new AeronUdpTransportFactory().create(Map.of("endpiont", "127.0.0.1:1")));
        assertTrue(ex.getMessage().contains("endpiont"), ex.getMessage());
        for (final String key : AeronTransportConfig.KNOWN_KEYS) {
            assertTrue(ex.getMessage().contains(key), "message lacks known key " + key + ": " + ex.getMessage());
        }
    }

    @Test
    void badValuesFailFastWithWhatToChange() {
        final Map<Map<String, String>, String> cases = Map.of(
            Map.of("mtu", "1000"), "multiple of 32",
            Map.of("mtu", "big"), "integer",
            Map.of("driver.threading", "many"), "'shared'",
            Map.of("endpoint", "localhost"), "host:port",
            Map.of("endpoint", "127.0.0.1:70000"), "1..65535",
            Map.of("multicast.group", "10.0.0.1:4000"), "multicast",
            Map.of("term.length", "100000"), "power of two",
            Map.of("channel", "aeron:ipc"), "aeron:udp",
            Map.of("channel", "aeron:udp?endpoint=239.1.1.1:4000|mtu=8192"), "'mtu' property",
            Map.of("stream.id.base", "x"), "integer");
        final var even = assertThrows(BusConfigurationException.class,
            () -> new AeronUdpTransportFactory().create(Map.of("multicast.group", "239.255.0.2:4000")));
        assertTrue(even.getMessage().contains("odd"), even.getMessage());
        cases.forEach((props, hint) -> {
            final var ex = assertThrows(BusConfigurationException.class, () -> new AeronUdpTransportFactory().create(props), props::toString);
            assertTrue(ex.getMessage().contains(hint), props + " -> " + ex.getMessage());
            assertTrue(ex.getMessage().contains(props.keySet().iterator().next()), "message must name the key: " + ex.getMessage());
        });
        final var ipc = assertThrows(BusConfigurationException.class, () -> new AeronIpcTransportFactory().create(Map.of("endpoint", "h:1")));
        assertTrue(ipc.getMessage().contains("aeron-udp only"), ipc.getMessage());
    }

    @Test
    void missingExternalDriverFailsAtStart() {
        final String dir = CommonContext.getAeronDirectoryName() + "-rdma-bus-test-no-driver-" + System.nanoTime();
        final var ex = assertThrows(TransportException.class,
            () -> Bus.builder().name("nodriver").transport("aeron-ipc").transportProperty("aeron.dir", dir).build());
        assertTrue(ex.getMessage().contains(dir) && ex.getMessage().contains("aeron.dir"), ex.getMessage());
    }

    @Test
    void factoriesAreFoundByServiceLoaderWithPriorities() {
        final Map<String, Integer> priorities = new HashMap<>();
        ServiceLoader.load(TransportFactory.class).forEach(f -> priorities.put(f.name(), f.priority()));
        assertEquals(AeronUdpTransportFactory.PRIORITY, priorities.get("aeron-udp"));
        assertEquals(AeronIpcTransportFactory.PRIORITY, priorities.get("aeron-ipc"));
        assertTrue(AeronUdpTransportFactory.PRIORITY > AeronIpcTransportFactory.PRIORITY);
    }

    @Test
    void capabilitiesAndStreamIdFollowTheDocumentedDerivation() {
        final AeronTransport t = (AeronTransport) new AeronUdpTransportFactory().create(Map.of("mtu", "4096", "stream.id.base", "1000"));
        assertEquals(4096 - 32, t.capabilities().maxBestEffortFrameLength());
        assertEquals(4096 - 32, t.capabilities().maxReliableFrameLength());
        assertTrue(t.capabilities().crossHost());
        assertFalse(t.capabilities().multicast());
        final int topicId = FrameHeader.topicId("prices");
        assertEquals(1000 + topicId, t.config().streamId(topicId));
        assertTrue(t.publicationChannel(Delivery.RELIABLE).contains("fc=min"), t.publicationChannel(Delivery.RELIABLE));
        assertTrue(t.subscriptionChannel(Delivery.BEST_EFFORT, "127.0.0.1:1").contains("reliable=false"));
        final AeronTransport ipc = (AeronTransport) new AeronIpcTransportFactory().create(Map.of());
        assertFalse(ipc.capabilities().crossHost());
        assertTrue(ipc.subscriptionChannel(Delivery.BEST_EFFORT, null).contains("tether=false"));
    }

    // ------------------------------------------------------------------------------------------------ lifecycle

    @ParameterizedTest
    @EnumSource(AeronMedium.class)
    void closeStopsEveryThreadAndRemovesTheDriverDirectory(final AeronMedium medium) throws Exception {
        final Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
        final String busName = "lifecycle-" + medium + "-" + System.nanoTime();
        final Map<String, String> props = medium == AeronMedium.UDP ? Map.of("endpoint", "127.0.0.1:" + AeronTestSupport.freeUdpPort()) : Map.of();
        final AeronTransport transport = (AeronTransport) (medium == AeronMedium.UDP ? new AeronUdpTransportFactory()
            : new AeronIpcTransportFactory()).create(props);
        final Topic<String> topic = Topic.of("lifecycle", Codecs.utf8(), Delivery.RELIABLE);
        final Bus bus = Bus.builder().name(busName).transport(transport).build();
        final var values = bus.subscribe(topic).take(10).collectList().toFuture();
        bus.publish(topic, Flux.range(0, 10).map(i -> "v" + i)).block(WAIT);
        assertEquals(10, values.get(20, TimeUnit.SECONDS).size(), "a bus must reach itself");
        final File dir = new File(transport.aeronDirectory());
        assertTrue(dir.isDirectory(), "embedded driver directory " + dir);
        final Set<String> own = AeronTestSupport.liveThreads(busName);
        // the default threading mode (SHARED) runs the receive agent on the bus's shared thread, not one of its own
        assertTrue(own.stream().anyMatch(n -> n.startsWith("rdma-bus-shared-" + busName)), own.toString());
        assertTrue(own.stream().noneMatch(n -> n.startsWith("rdma-bus-" + medium.factoryName() + "-receiver-")), own.toString());
        assertTrue(own.stream().anyMatch(n -> n.startsWith("rdma-bus-" + medium.factoryName() + "-driver-")), own.toString());
        assertTrue(own.stream().anyMatch(n -> n.startsWith("rdma-bus-" + medium.factoryName() + "-client-")), own.toString());

        bus.close();
        bus.close();
        transport.close(); // idempotent
        assertFalse(dir.exists(), "driver directory left behind: " + dir);
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Set<String> left;
        do {
            left = Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && !before.contains(t))
                .map(Thread::getName).filter(n -> n.startsWith("rdma-bus-") || n.startsWith("aeron")).collect(Collectors.toSet());
            if (left.isEmpty()) {
                break;
            }
            Thread.sleep(20);
        } while (System.nanoTime() < deadlineNs);
        assertTrue(left.isEmpty(), "threads alive after close: " + left);
        final Transport unstarted = new AeronUdpTransportFactory().create(Map.of());
        unstarted.close(); // closing an unstarted transport is fine
        assertThrows(TransportException.class, () -> transport.addPublication(topic.descriptor()));
    }

    // ------------------------------------------------------------------------------------------------ pub/sub per medium

    @Test
    void udpUnicastFansOutToTwoSubscriberBusesOnOneHost() throws Exception {
        final String pubEndpoint = "127.0.0.1:" + AeronTestSupport.freeUdpPort();
        final var seeds = new StaticSeedDiscovery(Map.of("aeron-udp", List.of(pubEndpoint)));
        final Topic<String> topic = Topic.of("fanout", Codecs.utf8(), Delivery.RELIABLE);
        try (Bus pub = Bus.builder().name("u-pub").transport("aeron-udp").transportProperty("endpoint", pubEndpoint).build();
             Bus subA = Bus.builder().name("u-sub-a").transport("aeron-udp").discovery(seeds)
                 .transportProperty("endpoint", "127.0.0.1:" + AeronTestSupport.freeUdpPort()).build();
             Bus subB = Bus.builder().name("u-sub-b").transport("aeron-udp").discovery(seeds)
                 .transportProperty("endpoint", "127.0.0.1:" + AeronTestSupport.freeUdpPort()).build()) {
            assertPubSub(pub, List.of(subA, subB), topic, 2_000);
        }
    }

    @Test
    void udpMulticastOnLoopbackDeliversToEverySubscriber() throws Exception {
        final String group = "239.255.91.7:" + AeronTestSupport.freeUdpPort();
        final Topic<String> topic = Topic.of("mcast", Codecs.utf8(), Delivery.RELIABLE);
        try (Bus pub = Bus.builder().name("m-pub").transport("aeron-udp").transportProperty("multicast.group", group).build();
             Bus subA = Bus.builder().name("m-sub-a").transport("aeron-udp").transportProperty("multicast.group", group).build();
             Bus subB = Bus.builder().name("m-sub-b").transport("aeron-udp").transportProperty("multicast.group", group).build()) {
            assertTrue(pub.publication(topic) != null);
            assertPubSub(pub, List.of(subA, subB), topic, 2_000);
        }
    }

    @Test
    void ipcBetweenBusesSharingOneDriver() throws Exception {
        try (MediaDriver driver = launchDriver("ipc-test")) {
            final Topic<String> topic = Topic.of("ipc", Codecs.utf8(), Delivery.RELIABLE);
            try (Bus pub = Bus.builder().name("i-pub").transport("aeron-ipc").transportProperty("aeron.dir", driver.aeronDirectoryName()).build();
                 Bus sub = Bus.builder().name("i-sub").transport("aeron-ipc").transportProperty("aeron.dir", driver.aeronDirectoryName()).build()) {
                assertPubSub(pub, List.of(sub), topic, 5_000);
            }
            assertTrue(new File(driver.aeronDirectoryName()).isDirectory(), "an external driver's directory belongs to its owner");
        }
    }

    /**
     * Every subscriber bus gets all {@code n} messages, in order. One publication sends probes until every subscriber
     * has had one (its image of that publication's session has joined: on UDP unicast a destination joins as its status
     * messages arrive), then the messages; a subscriber's stream leaves the probes out.
     */
    private static void assertPubSub(final Bus pub, final List<Bus> subs, final Topic<String> topic, final int n) throws Exception {
        final List<CompletableFuture<List<String>>> got = new ArrayList<>();
        final List<AtomicBoolean> probed = new ArrayList<>();
        for (final Bus sub : subs) {
            final AtomicBoolean sawProbe = new AtomicBoolean();
            probed.add(sawProbe);
            got.add(sub.subscribe(topic).doOnNext(v -> {
                if (PROBE.equals(v)) {
                    sawProbe.set(true);
                }
            }).filter(v -> !PROBE.equals(v)).take(n).collectList().toFuture());
        }
        try (BusPublication<String> publication = pub.publication(topic)) {
            Awaitility.await("a probe reached every subscriber bus").atMost(WAIT).pollInterval(Duration.ofMillis(20)).until(() -> {
                publication.offer(PROBE);
                return probed.stream().allMatch(AtomicBoolean::get);
            });
            final long deadlineNs = System.nanoTime() + WAIT.toNanos();
            for (int i = 0; i < n;) {
                if (publication.offer("m" + i) == PublishStatus.OK) {
                    i++;
                } else {
                    assertTrue(System.nanoTime() < deadlineNs, "the publication took " + i + " of " + n + " messages in " + WAIT);
                    Thread.onSpinWait();
                }
            }
        }
        final List<String> expected = IntStream.range(0, n).mapToObj(i -> "m" + i).toList();
        for (final CompletableFuture<List<String>> values : got) {
            assertEquals(expected, values.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        }
    }

    /** Two media drivers cannot bind one control endpoint: the second publisher fails with what to change. */
    @Test
    void secondPublisherOnTheSameControlEndpointFailsWithAHint() {
        final String endpoint = "127.0.0.1:" + AeronTestSupport.freeUdpPort();
        final Topic<String> topic = Topic.of("clash", Codecs.utf8(), Delivery.RELIABLE);
        try (Bus first = Bus.builder().name("clash-a").transport("aeron-udp").transportProperty("endpoint", endpoint).build();
             Bus second = Bus.builder().name("clash-b").transport("aeron-udp").transportProperty("endpoint", endpoint).build()) {
            first.publication(topic);
            final var ex = assertThrows(TransportException.class, () -> second.publication(topic));
            assertTrue(ex.getMessage().contains(endpoint) && ex.getMessage().contains("give each node its own 'endpoint'"), ex.getMessage());
        }
    }

    /**
     * A unicast subscription joins every seed's control endpoint, one Aeron subscription each, all asked of the driver
     * at once. When the driver refuses one (a seed with a port out of range), subscribing fails naming that channel, and the
     * channels it did add are closed, not left receiving.
     */
    @Test
    void aSubscriptionWithAChannelTheDriverRefusesFailsNamingItAndLeavesNoneOfItsChannelsOpen() {
        final String own = "127.0.0.1:" + AeronTestSupport.freeUdpPort();
        final String refused = "127.0.0.1:99999";
        final AeronTransport t = (AeronTransport) new AeronUdpTransportFactory().create(Map.of("endpoint", own));
        try {
            t.start(AeronTestSupport.context("refused", AeronTestSupport.errors(), List.of(refused)));
            final String ownChannel = "aeron:udp?endpoint=127.0.0.1:0|control=" + own + "|control-mode=dynamic";
            try (Aeron observer = Aeron.connect(new Aeron.Context().aeronDirectoryName(t.aeronDirectory()))) {
                // the receive channel's status counter is there while a subscription holds the channel, and goes with it
                final Subscription probe = observer.addSubscription(ownChannel, 1);
                Awaitility.await().atMost(WAIT).until(() -> receiveChannelOpen(observer, ownChannel));
                probe.close();
                Awaitility.await().atMost(WAIT).until(() -> !receiveChannelOpen(observer, ownChannel));

                final var ex = assertThrows(TransportException.class,
                    () -> t.addSubscription(Topic.of("refused", Codecs.utf8(), Delivery.RELIABLE).descriptor(), new DiscardingSink()));
                assertTrue(ex.getMessage().contains("cannot subscribe topic 'refused'") && ex.getMessage().contains("control=" + refused)
                    && ex.getMessage().contains("port out of range"), ex.getMessage());
                // the channel on this node's own endpoint was added (asked first, answered before the refusal)
                Awaitility.await("the channel the failed subscription added is closed").atMost(WAIT)
                    .until(() -> !receiveChannelOpen(observer, ownChannel));
            }
        } finally {
            t.close();
        }
    }

    /** @return true while the driver has a receive channel endpoint (its status counter) for {@code channel} */
    private static boolean receiveChannelOpen(final Aeron observer, final String channel) {
        final AtomicBoolean open = new AtomicBoolean();
        observer.countersReader().forEach((counterId, typeId, key, label) -> {
            if (typeId == ReceiveChannelStatus.RECEIVE_CHANNEL_STATUS_TYPE_ID && label.contains(channel)) {
                open.set(true);
            }
        });
        return open.get();
    }

    /** Takes every frame and does nothing with it. */
    private static final class DiscardingSink implements SubscriptionSink {
        @Override
        public int onFrame(final DirectBuffer buffer, final int offset, final int length) {
            return CONTINUE;
        }

        @Override
        public long availableCredits() {
            return Long.MAX_VALUE;
        }

        @Override
        public void onTransportError(final Throwable cause) {
        }
    }

    /** The publisher's embedded driver stops with its bus: what the bus committed before close must still arrive. */
    @Test
    void closingThePublishingBusRightAfterPublishingLosesNothing() throws Exception {
        final String pubEndpoint = "127.0.0.1:" + AeronTestSupport.freeUdpPort();
        final var seeds = new StaticSeedDiscovery(Map.of("aeron-udp", List.of(pubEndpoint)));
        final Topic<String> topic = Topic.of("close-flush", Codecs.utf8(), Delivery.RELIABLE);
        final int n = 10_000;
        try (Bus sub = Bus.builder().name("f-sub").transport("aeron-udp").discovery(seeds)
                 .transportProperty("endpoint", "127.0.0.1:" + AeronTestSupport.freeUdpPort()).build()) {
            // a slow subscriber keeps the publisher's sender behind: at close, committed frames wait in its term buffer
            final var values = sub.subscribe(topic, io.rdmabus.SubscribeOptions.<String>defaults().withRingSize(16)).take(n)
                .doOnNext(v -> java.util.concurrent.locks.LockSupport.parkNanos(50_000)).collectList().toFuture();
            final Bus pub = Bus.builder().name("f-pub").transport("aeron-udp").transportProperty("endpoint", pubEndpoint).build();
            pub.publish(topic, Flux.range(0, n).map(i -> "m" + i)).block(WAIT);
            pub.close(); // right away: frames still in the publisher's term buffer must go out first
            assertEquals(IntStream.range(0, n).mapToObj(i -> "m" + i).toList(), values.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        }
    }

    static MediaDriver launchDriver(final String tag) {
        return MediaDriver.launchEmbedded(new MediaDriver.Context()
            .aeronDirectoryName(CommonContext.getAeronDirectoryName() + "-rdma-bus-" + tag + "-" + System.nanoTime())
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .threadingMode(ThreadingMode.SHARED)
            .sharedIdleStrategy(IdleStrategies.supplier("backoff").get())
            .asyncExecutorEnabled(false)
            .termBufferSparseFile(true)
            .ipcTermBufferLength(AeronTransportConfig.DEFAULT_TERM_LENGTH)
            .publicationTermBufferLength(AeronTransportConfig.DEFAULT_TERM_LENGTH));
    }

    // ------------------------------------------------------------------------------------------------ backpressure

    /**
     * A reliable subscriber whose sink refuses frames (BACK_PRESSURE) must hold the publisher back (tryClaim returns
     * BACK_PRESSURED after at most about one term) and, once it accepts again, receive every frame exactly once, in order.
     */
    @ParameterizedTest
    @EnumSource(AeronMedium.class)
    void slowReliableSubscriberBackPressuresThePublisherAndLosesNothing(final AeronMedium medium) throws Exception {
        final List<Throwable> errors = AeronTestSupport.errors();
        final MediaDriver shared = medium == AeronMedium.IPC ? launchDriver("bp") : null;
        final String endpoint = "127.0.0.1:" + AeronTestSupport.freeUdpPort();
        final Map<String, String> pubProps = medium == AeronMedium.IPC ? Map.of("aeron.dir", shared.aeronDirectoryName())
            : Map.of("endpoint", endpoint);
        final Map<String, String> subProps = medium == AeronMedium.IPC ? Map.of("aeron.dir", shared.aeronDirectoryName())
            : Map.of("endpoint", "127.0.0.1:" + AeronTestSupport.freeUdpPort());
        final TransportFactory factory = medium == AeronMedium.IPC ? new AeronIpcTransportFactory() : new AeronUdpTransportFactory();
        final Transport pubT = factory.create(pubProps);
        final Transport subT = factory.create(subProps);
        try {
            pubT.start(AeronTestSupport.context("bp-pub", errors, List.of()));
            subT.start(AeronTestSupport.context("bp-sub", errors, List.of(endpoint)));
            final Topic<String> topic = Topic.of("bp", Codecs.utf8(), Delivery.RELIABLE);
            final AtomicBoolean accepting = new AtomicBoolean(false);
            final AtomicLong nextExpected = new AtomicLong(1);
            final AtomicBoolean probeSeen = new AtomicBoolean();
            final AtomicLong outOfOrder = new AtomicLong();
            final AtomicLong refusals = new AtomicLong();
            final AtomicLong probes = new AtomicLong();
            final SubscriptionSink sink = new SubscriptionSink() {
                @Override
                public int onFrame(final DirectBuffer buffer, final int offset, final int length) {
                    final long seq = buffer.getLong(offset, java.nio.ByteOrder.LITTLE_ENDIAN);
                    if (seq < 0) {
                        probeSeen.set(true); // connection probes: always taken, not part of the stream
                        probes.incrementAndGet();
                        return CONTINUE;
                    }
                    if (!accepting.get()) {
                        refusals.incrementAndGet();
                        return BACK_PRESSURE;
                    }
                    if (seq != nextExpected.get()) {
                        outOfOrder.incrementAndGet();
                    }
                    nextExpected.set(seq + 1);
                    return CONTINUE;
                }

                @Override
                public long availableCredits() {
                    return accepting.get() ? 1024 : 0;
                }

                @Override
                public void onTransportError(final Throwable cause) {
                    errors.add(cause);
                }
            };
            final TransportSubscription sub = subT.addSubscription(topic.descriptor(), sink);
            final TransportPublication pub = pubT.addPublication(topic.descriptor());
            final int frameLength = 1024;
            long seq = 0;
            probeUntilConnected(pub, frameLength, probeSeen);
            seq = 1;
            int status;
            while ((status = claimAndWrite(pub, frameLength, seq)) == TransportStatus.OK) {
                seq++;
                assertTrue(seq < 100_000, "publisher was never back-pressured by a refusing reliable subscriber");
            }
            assertEquals(TransportStatus.BACK_PRESSURED, status, TransportStatus.describe(status));
            // while the sink keeps refusing, the publisher stays held back: the refused frame is offered again and again
            // and, after the sender has drained its window, nothing more is accepted (bounded by about one term)
            final long holdUntilNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(600);
            while (System.nanoTime() < holdUntilNs) {
                status = claimAndWrite(pub, frameLength, seq);
                if (status == TransportStatus.OK) {
                    seq++;
                } else {
                    assertEquals(TransportStatus.BACK_PRESSURED, status, TransportStatus.describe(status));
                    Thread.sleep(5);
                }
                final long bytesAhead = (seq - 1) * (frameLength + 32L);
                assertTrue(bytesAhead <= 2L * AeronTransportConfig.DEFAULT_TERM_LENGTH, "publisher ran " + bytesAhead + " bytes ahead");
            }
            assertEquals(TransportStatus.BACK_PRESSURED, status, "the publisher must end up held back while the sink refuses");
            assertTrue(refusals.get() > 1, "the refused frame was not offered again: " + refusals.get() + " refusals");
            final long sent = seq;
            accepting.set(true);
            final long deadline2Ns = System.nanoTime() + WAIT.toNanos();
            for (int i = 0; i < 2_000; i++) { // and the stream continues after the stall
                while (claimAndWrite(pub, frameLength, seq) != TransportStatus.OK) {
                    assertTrue(System.nanoTime() < deadline2Ns, "publisher stayed back-pressured after the subscriber resumed");
                    Thread.onSpinWait();
                }
                seq++;
            }
            while (nextExpected.get() < seq && System.nanoTime() < deadline2Ns) {
                Thread.sleep(5);
            }
            assertEquals(seq, nextExpected.get(), "frames lost (sent " + seq + ", " + sent + " before the stall)");
            assertEquals(0, outOfOrder.get(), "frames out of order or duplicated");
            assertTrue(errors.isEmpty(), errors.toString());
            assertReceiveCounters(subT, probes.get() + seq - 1, frameLength, refusals.get()); // the probes and frames 1 to seq - 1
            sub.close();
            pub.close();
        } finally {
            CloseHelper.quietCloseAll(pubT, subT, shared);
        }
    }

    /** Sends probes (sequence -1) until the subscriber's sink has seen one: connected end to end. */
    private static void probeUntilConnected(final TransportPublication pub, final int frameLength, final AtomicBoolean probeSeen) {
        Awaitility.await("a probe reached the subscriber").atMost(WAIT).pollInterval(Duration.ofMillis(2)).until(() -> {
            claimAndWrite(pub, frameLength, -1);
            return probeSeen.get();
        });
    }

    private static int claimAndWrite(final TransportPublication pub, final int frameLength, final long seq) {
        final int status = pub.tryClaim(frameLength);
        if (status == TransportStatus.OK) {
            final FrameClaim claim = pub.claim();
            claim.buffer().setMemory(claim.offset(), frameLength, (byte) 7);
            claim.buffer().putLong(claim.offset(), seq, java.nio.ByteOrder.LITTLE_ENDIAN);
            claim.commit();
        }
        return status;
    }

    /** The transport's receive counters (added at the end of each poll) catch up with what the sink took and refused. */
    private static void assertReceiveCounters(final Transport transport, final long frames, final int frameLength, final long refusals) {
        Awaitility.await("framesReceived reaching the " + frames + " frames the sink took").atMost(WAIT)
            .until(() -> transport.counters().get("framesReceived"), v -> v == frames);
        assertEquals(frames * frameLength, transport.counters().get("bytesReceived"), "bytesReceived");
        assertEquals(refusals, transport.counters().get("receiveBackPressured"), "receiveBackPressured");
    }

    @Test
    void tryClaimMapsTooLargeAndClosed() {
        final List<Throwable> errors = AeronTestSupport.errors();
        final Transport t = new AeronUdpTransportFactory().create(Map.of("endpoint", "127.0.0.1:" + AeronTestSupport.freeUdpPort()));
        try {
            t.start(AeronTestSupport.context("claims", errors, List.of()));
            final TransportPublication pub = t.addPublication(Topic.of("claims", Codecs.utf8(), Delivery.BEST_EFFORT).descriptor());
            assertEquals(1408 - 32, pub.maxFrameLength());
            assertEquals(TransportStatus.FRAME_TOO_LARGE, pub.tryClaim(pub.maxFrameLength() + 1));
            assertEquals(TransportStatus.NOT_CONNECTED, pub.tryClaim(64), "no subscriber yet");
            assertFalse(pub.isConnected());
            pub.close();
            assertEquals(TransportStatus.CLOSED, pub.tryClaim(64));
        } finally {
            t.close();
        }
        assertTrue(errors.isEmpty(), errors.toString());
    }
}
