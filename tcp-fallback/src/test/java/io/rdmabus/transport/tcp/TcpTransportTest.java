package io.rdmabus.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.rdmabus.Bus;
import io.rdmabus.BusConfigurationException;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.IdleStrategies;
import io.rdmabus.PublishStatus;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.Disposable;

/** The TCP transport on real loopback sockets: raw transports, raw sockets speaking (or breaking) the protocol, and buses. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpTransportTest {
    private static final AtomicInteger NAMES = new AtomicInteger();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    private static String uniqueName(final String prefix) {
        return prefix + "-" + ProcessHandle.current().pid() + "-" + NAMES.incrementAndGet();
    }

    private TcpTransport transport(final String busName, final Map<String, String> properties, final List<String> seeds) {
        final TcpTransport transport = new TcpTransport(TcpTransportConfig.from(properties));
        toClose.add(transport);
        transport.start(new TransportContext(busName, IdleStrategies.supplier("backoff"), Throwable::printStackTrace,
            new StaticSeedDiscovery(Map.of("tcp", seeds))));
        return transport;
    }

    private Bus bus(final String name, final Map<String, String> properties, final List<String> seeds) {
        final var builder = Bus.builder().name(name).transport("tcp").idleStrategy("backoff")
            .discovery(new StaticSeedDiscovery(Map.of("tcp", seeds)));
        properties.forEach(builder::transportProperty);
        final Bus bus = builder.build();
        toClose.add(bus);
        return bus;
    }

    private static void await(final String what, final BooleanSupplier condition) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(5);
        }
    }

    /** A sink that records payload sequences; optionally refuses frames while {@code refuse} is set. */
    static final class RecordingSink implements SubscriptionSink {
        final List<Long> sequences = new CopyOnWriteArrayList<>();
        volatile boolean refuse;
        final AtomicInteger refusals = new AtomicInteger();
        /** Frames whose payload was not every byte the sequence's low byte ({@link #offer}). */
        final AtomicInteger corrupt = new AtomicInteger();

        @Override
        public int onFrame(final DirectBuffer buffer, final int offset, final int length) {
            if (refuse) {
                refusals.incrementAndGet();
                return BACK_PRESSURE;
            }
            final long sequence = FrameHeader.sequence(buffer, offset);
            for (int i = offset + FrameHeader.LENGTH; i < offset + length; i++) {
                if (buffer.getByte(i) != (byte) sequence) {
                    corrupt.incrementAndGet();
                    break;
                }
            }
            sequences.add(sequence);
            return CONTINUE;
        }

        @Override
        public long availableCredits() {
            return refuse ? 0 : 1024;
        }

        @Override
        public void onTransportError(final Throwable cause) {
        }
    }

    /** Publishes one frame whose payload is every byte the sequence's low byte (what {@link RecordingSink} checks). */
    static int offer(final TransportPublication pub, final long sequence, final int payloadLength) {
        final int status = pub.tryClaim(FrameHeader.LENGTH + payloadLength);
        if (status == TransportStatus.OK) {
            final var claim = pub.claim();
            FrameHeader.write(claim.buffer(), claim.offset(), FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + payloadLength, 7, 1,
                sequence, 0);
            claim.buffer().setMemory(claim.offset() + FrameHeader.LENGTH, payloadLength, (byte) sequence);
            claim.commit();
        }
        return status;
    }

    /** A HELLO without a bus secret, as a raw peer sends it. */
    static byte[] hello(final int version, final int maxFrame) {
        return hello(version, maxFrame, 0);
    }

    /** A HELLO with the given flags (bit 0: has a bus secret) and a zero nonce, as a raw peer sends it. */
    static byte[] hello(final int version, final int maxFrame, final int flags) {
        final byte[] name = "raw".getBytes(StandardCharsets.UTF_8);
        final int length = 1 + TcpProtocol.HELLO_FIXED + 2 + name.length;
        final ByteBuffer b = ByteBuffer.allocate(4 + length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(length).put((byte) TcpProtocol.TYPE_HELLO).putInt(TcpProtocol.MAGIC).putShort((short) version).putLong(42L)
            .putInt(maxFrame).put((byte) flags).put(new byte[TcpProtocol.NONCE_BYTES]).putShort((short) name.length).put(name);
        return b.array();
    }

    /** @return true if the peer closed the socket (EOF or reset) within the socket timeout */
    static boolean closedByPeer(final Socket socket) throws IOException {
        socket.setSoTimeout(10_000);
        final InputStream in = socket.getInputStream();
        final byte[] sink = new byte[4096];
        try {
            while (true) {
                if (in.read(sink) < 0) {
                    return true;
                }
            }
        } catch (final java.net.SocketTimeoutException ex) {
            return false;
        } catch (final IOException ex) {
            return true; // connection reset
        }
    }

    // ------------------------------------------------------------------------------------------------ tests

    /**
     * Closing a publication waits until what it committed was written to each subscriber's socket, bounded by
     * {@code tcp.linger.ms}: here 10 minutes, so a close that waits for the bound instead of for the writes fails. It did:
     * the written position could stay behind (an earlier flush's mark stored after a later one's, or a drain that only
     * skipped an aborted claim), and every such close waited the whole linger (5 s by default).
     */
    @Test
    void closingAPublicationReturnsOnceWhatItSentIsWrittenNotAtTheLingersEnd() throws Exception {
        final TcpTransport server = transport(uniqueName("srv"), Map.of(), List.of());
        final TopicDescriptor topic = new TopicDescriptor("t", 7, Delivery.RELIABLE, 1024);
        final RecordingSink sink = new RecordingSink();
        server.addSubscription(topic, sink);
        final TcpTransport client = transport(uniqueName("cli"), Map.of(TcpTransportConfig.LINGER_MS, "600000"),
            List.of(server.boundEndpoint()));
        final TransportPublication pub = client.addPublication(topic);
        await("the subscription reaches the publisher", pub::isConnected);
        final int messages = 3000; // 3 MB in 64 KiB batches: the socket's buffers fill and the channel turns unwritable
        for (long i = 0; i < messages; i++) {
            while (offer(pub, i, 1000) != TransportStatus.OK) {
                Thread.onSpinWait();
            }
        }
        await(messages + " frames", () -> sink.sequences.size() == messages);
        final java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
        Thread.ofPlatform().name("closing-publication").start(() -> {
            pub.close();
            closed.countDown();
        });
        assertTrue(closed.await(20, TimeUnit.SECONDS),
            "the subscriber has every frame, yet the publication's close() still waited 20 s later (tcp.linger.ms is 600000)");
    }

    @Test
    void bindsAnEphemeralLoopbackPortAndExchangesFrames() throws Exception {
        final TcpTransport server = transport(uniqueName("srv"), Map.of(), List.of());
        final InetSocketAddress bound = server.boundAddress();
        assertEquals("127.0.0.1", bound.getHostString());
        assertTrue(bound.getPort() > 0, "the bound port is observable");
        final TopicDescriptor topic = new TopicDescriptor("t", 7, Delivery.RELIABLE, 1024);
        final RecordingSink sink = new RecordingSink();
        server.addSubscription(topic, sink);

        final TcpTransport client = transport(uniqueName("cli"), Map.of(), List.of(server.boundEndpoint()));
        final TransportPublication pub = client.addPublication(topic);
        await("the subscription reaches the publisher", pub::isConnected);
        assertEquals(1, client.connectedPeers());
        for (long i = 0; i < 1000; i++) {
            while (offer(pub, i, 16) != TransportStatus.OK) {
                Thread.onSpinWait();
            }
        }
        await("1000 frames", () -> sink.sequences.size() == 1000);
        for (int i = 0; i < 1000; i++) {
            assertEquals(i, sink.sequences.get(i), "in order");
        }
        // the other direction of the same connection
        final RecordingSink back = new RecordingSink();
        client.addSubscription(topic, back);
        final TransportPublication serverPub = server.addPublication(topic);
        await("the reverse subscription", serverPub::isConnected);
        assertEquals(TransportStatus.OK, offer(serverPub, 5, 8));
        await("a frame back", () -> back.sequences.size() == 1);
        assertEquals(TransportStatus.FRAME_TOO_LARGE, pub.tryClaim(pub.maxFrameLength() + 1));
    }

    @Test
    void garbageFromARawSocketIsCountedAndTheConnectionClosed() throws Exception {
        final TcpTransport server = transport(uniqueName("srv"), Map.of(), List.of());
        try (Socket socket = new Socket("127.0.0.1", server.boundAddress().getPort())) {
            final OutputStream out = socket.getOutputStream();
            out.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertTrue(closedByPeer(socket), "the transport closes a connection that speaks garbage");
        }
        await("protocol error counted", () -> server.protocolErrors() == 1);
        assertEquals(0, server.connectedPeers());
    }

    @Test
    void aLengthPrefixAboveTheMaxFrameClosesTheConnectionWithoutBuffering() throws Exception {
        final TcpTransport server = transport(uniqueName("srv"), Map.of(), List.of());
        try (Socket socket = new Socket("127.0.0.1", server.boundAddress().getPort())) {
            final OutputStream out = socket.getOutputStream();
            out.write(hello(TcpProtocol.VERSION, server.config().maxFrameBytes()));
            final ByteBuffer huge = ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN);
            huge.putInt(Integer.MAX_VALUE - 1).put((byte) TcpProtocol.TYPE_DATA).putInt(7);
            out.write(huge.array());
            out.flush();
            assertTrue(closedByPeer(socket), "an oversized length prefix closes the connection");
        }
        await("protocol error counted", () -> server.protocolErrors() == 1);
    }

    @Test
    void aPeerSpeakingAnotherProtocolVersionIsRejected() throws Exception {
        final TcpTransport server = transport(uniqueName("srv"), Map.of(), List.of());
        try (Socket socket = new Socket("127.0.0.1", server.boundAddress().getPort())) {
            final OutputStream out = socket.getOutputStream();
            out.write(hello(TcpProtocol.VERSION + 1, server.config().maxFrameBytes()));
            out.flush();
            // the transport's own hello arrives first and says version 1
            final DataInputStream in = new DataInputStream(socket.getInputStream());
            socket.setSoTimeout(10_000);
            final byte[] header = new byte[11];
            in.readFully(header);
            final ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
            h.getInt();
            assertEquals(TcpProtocol.TYPE_HELLO, h.get());
            assertEquals(TcpProtocol.MAGIC, h.getInt());
            assertEquals(TcpProtocol.VERSION, h.getShort());
            assertTrue(closedByPeer(socket), "a peer of another version is disconnected");
        }
        await("rejection counted", () -> server.handshakeRejections() == 1);
        assertEquals(0, server.protocolErrors());
    }

    @Test
    void aSilentPeerIsClosedAfterTheHandshakeTimeout() throws Exception {
        final TcpTransport server = transport(uniqueName("srv"), Map.of(TcpTransportConfig.HANDSHAKE_TIMEOUT_MS, "300"), List.of());
        try (Socket socket = new Socket("127.0.0.1", server.boundAddress().getPort())) {
            assertTrue(closedByPeer(socket), "a peer that never says hello is disconnected");
        }
        await("handshake timeout counted", () -> server.handshakeTimeouts() == 1);
        assertEquals(0, server.protocolErrors());
    }

    @Test
    void reconnectsWhenTheRemoteComesBackOnTheSamePortAndAnnouncesSubscriptionsAgain() throws Exception {
        final TopicDescriptor topic = new TopicDescriptor("r", 7, Delivery.RELIABLE, 1024);
        final TcpTransport first = transport(uniqueName("srv"), Map.of(), List.of());
        final int port = first.boundAddress().getPort();
        final RecordingSink sink1 = new RecordingSink();
        first.addSubscription(topic, sink1);
        final TcpTransport client = transport(uniqueName("cli"),
            Map.of(TcpTransportConfig.RECONNECT_MIN_MS, "20", TcpTransportConfig.RECONNECT_MAX_MS, "200"), List.of("127.0.0.1:" + port));
        final TransportPublication pub = client.addPublication(topic);
        await("connected", pub::isConnected);
        assertEquals(TransportStatus.OK, offer(pub, 0, 8));
        await("first frame", () -> sink1.sequences.size() == 1);

        first.close();
        await("the publisher sees the subscriber gone", () -> !pub.isConnected());
        assertEquals(TransportStatus.NOT_CONNECTED, pub.tryClaim(64));
        Thread.sleep(300); // a few failed attempts with backoff
        final long attemptsWhileDown = client.connectAttempts();

        final TcpTransport second = transport(uniqueName("srv2"), Map.of(TcpTransportConfig.BIND, "127.0.0.1:" + port), List.of());
        final RecordingSink sink2 = new RecordingSink();
        second.addSubscription(topic, sink2);
        await("reconnected and subscription announced again", pub::isConnected);
        assertTrue(client.connectAttempts() > attemptsWhileDown && attemptsWhileDown >= 2, "it retried: " + attemptsWhileDown);
        assertEquals(TransportStatus.OK, offer(pub, 1, 8));
        await("a frame after reconnect", () -> sink2.sequences.size() == 1);
    }

    @Test
    void aRefusingSinkBackPressuresTheReliablePublisherWithinItsTopicWindowWithoutLoss() throws Exception {
        final TopicDescriptor topic = new TopicDescriptor("bp", 7, Delivery.RELIABLE, 1024);
        final TcpTransport server = transport(uniqueName("srv"), Map.of(), List.of());
        final RecordingSink sink = new RecordingSink();
        sink.refuse = true;
        server.addSubscription(topic, sink);
        final TcpTransport client = transport(uniqueName("cli"), Map.of(TcpTransportConfig.OUTBOUND_BUFFER_BYTES, "262144"),
            List.of(server.boundEndpoint()));
        final TransportPublication pub = client.addPublication(topic);
        await("connected", pub::isConnected);
        long sent = 0;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        int status;
        while ((status = offer(pub, sent, 1024)) == TransportStatus.OK) {
            sent++;
            assertTrue(System.nanoTime() < deadline, "never back-pressured after " + sent + " frames");
        }
        assertEquals(TransportStatus.BACK_PRESSURED, status);
        assertTrue(sent > 10, "some frames went out before the window closed: " + sent);
        final long window = server.config().topicWindowBytes();
        assertTrue(sent * (TcpProtocol.DATA_HEADER + FrameHeader.LENGTH + 1024) <= window, "the publisher sent " + sent
            + " frames, more than the topic window of " + window + " bytes the subscribing node granted");
        // the publisher's window can close before the event loop even reaches the sink (a loaded machine): wait for the refusal
        await("the subscribing node queued a frame its sink refused", () -> server.framesQueued() > 0 && sink.refusals.get() > 0);

        sink.refuse = false;
        final long target = sent + 1000;
        while (sent < target) {
            if (offer(pub, sent, 1024) == TransportStatus.OK) {
                sent++;
            } else {
                Thread.onSpinWait();
            }
        }
        final long total = sent;
        await("every frame delivered after the sink recovers", () -> sink.sequences.size() == total);
        for (int i = 0; i < total; i++) {
            assertEquals(i, sink.sequences.get(i), "no loss, no reordering");
        }
    }

    @Test
    void bestEffortNeverBlocksAndCountsDropsToAStalledPeer() throws Exception {
        final TopicDescriptor topic = new TopicDescriptor("be", 9, Delivery.BEST_EFFORT, 1024);
        final TcpTransport server = transport(uniqueName("srv"), Map.of(), List.of());
        final RecordingSink sink = new RecordingSink();
        sink.refuse = true;
        server.addSubscription(topic, sink);
        final TcpTransport client = transport(uniqueName("cli"), Map.of(TcpTransportConfig.OUTBOUND_BUFFER_BYTES, "262144"),
            List.of(server.boundEndpoint()));
        final TransportPublication pub = client.addPublication(topic);
        await("connected", pub::isConnected);
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        long sent = 0;
        // the subscribing node keeps what its sink refuses up to a window, then drops (and counts); the publishing node
        // drops (and counts) once its outbound buffer to that node is full
        while (client.bestEffortDrops() + server.bestEffortDrops() < 100) {
            assertEquals(TransportStatus.OK, offer(pub, sent++, 1024), "best effort is never back-pressured");
            assertTrue(System.nanoTime() < deadline, "no drops after " + sent);
        }
        sink.refuse = false;
        final long taken = sent;
        // what was kept arrives; the dropped ones show as a gap in the sequence
        await("kept frames delivered", () -> !sink.sequences.isEmpty()
            && sink.sequences.size() + client.bestEffortDrops() + server.bestEffortDrops() == taken);
    }

    @Test
    void aPeerThatStopsReadingLosesBestEffortFramesWhileAnotherPeerGetsEveryOne() throws Exception {
        final TopicDescriptor topic = new TopicDescriptor("be2", 11, Delivery.BEST_EFFORT, 1024);
        final TcpTransport publisher = transport(uniqueName("pub"), Map.of(TcpTransportConfig.OUTBOUND_BUFFER_BYTES, "262144"), List.of());
        final TransportPublication pub = publisher.addPublication(topic);
        try (Socket stalled = new Socket()) {
            stalled.setReceiveBufferSize(4096);
            stalled.connect(new InetSocketAddress("127.0.0.1", publisher.boundAddress().getPort()));
            final OutputStream out = stalled.getOutputStream();
            out.write(hello(TcpProtocol.VERSION, publisher.config().maxFrameBytes()));
            final io.netty.buffer.ByteBuf subscribe = TcpProtocol.subscribe(io.netty.buffer.Unpooled.buffer().alloc(), topic.topicId(), false, 0,
                topic.name());
            out.write(io.netty.buffer.ByteBufUtil.getBytes(subscribe));
            subscribe.release();
            out.flush();
            await("the stalled peer subscribed", pub::isConnected); // it never reads from here on

            // the second subscribing node: frames are claimed in the stalled peer's ring first while it has room, and
            // copied into this one's; once that ring is full they are encoded straight into this one's
            final RecordingSink sink = new RecordingSink();
            final TcpTransport subscriber = transport(uniqueName("sub"), Map.of(), List.of(publisher.boundEndpoint()));
            subscriber.addSubscription(topic, sink);
            final int payload = Math.min(8192, pub.maxFrameLength() - FrameHeader.LENGTH);
            long sequence = 0;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (sink.sequences.isEmpty()) { // until the second node's SUBSCRIBE arrived: frames before it go to the stalled peer only
                assertEquals(TransportStatus.OK, offer(pub, sequence++, payload));
                Thread.sleep(1);
                assertTrue(System.nanoTime() < deadline, "the second subscriber got no frame in 30 s");
            }
            final long first = sink.sequences.get(0);
            while (publisher.bestEffortDrops() < 50) {
                assertEquals(TransportStatus.OK, offer(pub, sequence++, payload), "best effort is never back-pressured");
                final long sent = sequence - first;
                while (sink.sequences.size() < sent) { // one frame at a time: this subscriber's ring never fills
                    assertTrue(System.nanoTime() < deadline, "the second subscriber has " + sink.sequences.size() + " of " + sent
                        + " frames after 30 s");
                    Thread.onSpinWait();
                }
                assertTrue(System.nanoTime() < deadline, "fewer than 50 drops to the stalled peer after " + sent + " frames in 30 s: "
                    + publisher.bestEffortDrops());
            }
            for (int i = 0; i < sink.sequences.size(); i++) {
                assertEquals(first + i, sink.sequences.get(i), "the reading peer gets every frame, in order");
            }
            assertEquals(0, sink.corrupt.get(), "frames whose payload is not what was published");
            final long stalledDrops = publisher.connections().stream().filter(c -> c.peer().endsWith("(raw)"))
                .mapToLong(c -> c.counters().get(TcpConnectionCounter.DROPS.counterName())).sum();
            assertEquals(publisher.bestEffortDrops(), stalledDrops, "every drop was the stalled peer's");
        }
    }

    @Test
    void busesTalkOverTcpAndUnknownPropertiesAreRejected() throws Exception {
        final BusConfigurationException unknown = assertThrows(BusConfigurationException.class,
            () -> Bus.builder().name(uniqueName("bad")).transport("tcp").transportProperty("tcp.nope", "1").build());
        assertTrue(unknown.getMessage().contains("tcp.nope") && unknown.getMessage().contains(TcpTransportConfig.BIND), unknown.getMessage());
        assertThrows(BusConfigurationException.class, () -> TcpTransportConfig.from(Map.of(TcpTransportConfig.BIND, "nohost")));

        final int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        final Bus a = bus(uniqueName("a"), Map.of(TcpTransportConfig.BIND, "127.0.0.1:" + port), List.of());
        final Bus b = bus(uniqueName("b"), Map.of(), List.of("127.0.0.1:" + port));
        final Topic<String> topic = Topic.of("hello", Codecs.utf8(), Delivery.RELIABLE);
        final List<String> got = new CopyOnWriteArrayList<>();
        final Disposable subscription = a.subscribe(topic).subscribe(got::add);
        try (BusPublication<String> pub = b.publication(topic)) {
            await("connected", pub::isConnected);
            for (int i = 0; i < 100; i++) {
                while (pub.offer("m" + i) != PublishStatus.OK) {
                    Thread.onSpinWait();
                }
            }
            await("100 messages", () -> got.size() == 100);
        } finally {
            subscription.dispose();
        }
        assertEquals("m99", got.get(99));

        // the transport's own counters reach the bus's stats: garbage on a's port is one protocol error
        assertEquals(0L, a.stats().transportCounters().get("protocolErrors"), a.stats().toString());
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.getOutputStream().write("not an rdma-bus peer".getBytes(StandardCharsets.US_ASCII));
            assertTrue(closedByPeer(socket), "the transport closes a connection that speaks garbage");
        }
        await("protocol error in the bus stats", () -> a.stats().transportCounters().get("protocolErrors") == 1L);
        assertTrue(a.stats().transportCounters().keySet().containsAll(List.of("handshakeRejections", "bestEffortDrops",
            "framesQueued", "framesWithoutSubscriber", "connectAttempts", "refusedPeers", "handshakeTimeouts")), a.stats().toString());
    }

    @Test
    void closeStopsEveryThreadAndFreesThePort() throws Exception {
        final String name = uniqueName("closing");
        final TcpTransport server = transport(name, Map.of(), List.of());
        final TcpTransport client = transport(uniqueName("cli"), Map.of(), List.of(server.boundEndpoint()));
        await("connected", () -> client.connectedPeers() == 1);
        final int port = server.boundAddress().getPort();
        assertFalse(threadsNamed(name).isEmpty(), "event loop threads carry the bus name");
        server.close();
        server.close(); // idempotent
        await("threads gone", () -> threadsNamed(name).isEmpty());
        assertThrows(ConnectException.class, () -> new Socket("127.0.0.1", port).close(), "nothing listens on the port any more");
        await("the client notices", () -> client.connectedPeers() == 0);
        client.close();
        await("client threads gone", () -> threadsNamed("rdma-bus-tcp-io-cli").stream().noneMatch(n -> n.contains("-" + name)));
        try (java.net.ServerSocket again = new java.net.ServerSocket()) {
            again.setReuseAddress(true);
            again.bind(new InetSocketAddress("127.0.0.1", port));
        }
    }

    private static List<String> threadsNamed(final String part) {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).filter(n -> n.contains(part)).toList();
    }

    @Test
    void aSeedPointingAtItselfIsNotDialledForever() throws Exception {
        final int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        final TcpTransport self = transport(uniqueName("self"), Map.of(TcpTransportConfig.BIND, "127.0.0.1:" + port,
            TcpTransportConfig.RECONNECT_MIN_MS, "10"), List.of("127.0.0.1:" + port));
        Thread.sleep(500);
        assertEquals(1, self.connectAttempts(), "dialled itself once, then stopped");
        assertEquals(0, self.connectedPeers());
    }
}
