package io.rdmabus.transport.tcp;

import static io.rdmabus.transport.tcp.TcpTransportTest.closedByPeer;
import static io.rdmabus.transport.tcp.TcpTransportTest.hello;
import static io.rdmabus.transport.tcp.TcpTransportTest.offer;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.BusConfigurationException;
import io.rdmabus.Delivery;
import io.rdmabus.IdleStrategies;
import io.rdmabus.PublishStatus;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;
import io.rdmabus.transport.tcp.TcpTransportTest.RecordingSink;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.test.StepVerifier;

/**
 * Authentication of TCP peers on real loopback sockets: the bus secret's challenge-response (tcp.secret) and mutual TLS
 * (tcp.tls), with transports, buses and raw sockets that skip or break the handshake.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpAuthTest {
    private static final String SECRET = "tcp-auth-test-secret-0123456789";
    private static final String OTHER_SECRET = "another-secret-of-enough-bytes";
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final TopicDescriptor TOPIC = new TopicDescriptor("auth", 7, Delivery.RELIABLE, 1024);
    private static final AtomicInteger NAMES = new AtomicInteger();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
    }

    private TcpTransport transport(final Map<String, String> properties, final List<String> seeds) {
        final TcpTransport transport = new TcpTransport(TcpTransportConfig.from(properties));
        toClose.add(transport);
        transport.start(new TransportContext("auth-" + ProcessHandle.current().pid() + "-" + NAMES.incrementAndGet(),
            IdleStrategies.supplier("backoff"), Throwable::printStackTrace, new StaticSeedDiscovery(Map.of("tcp", seeds))));
        return transport;
    }

    private static Map<String, String> secret(final String secret) {
        return Map.of(TcpTransportConfig.SECRET, secret);
    }

    static String resource(final String name) {
        try {
            return Path.of(TcpAuthTest.class.getResource("/tls/" + name).toURI()).toString();
        } catch (final URISyntaxException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** TLS with the node certificate of CA {@code certOf} ("bus" or "other"), trusting CA {@code trust}. */
    static Map<String, String> tls(final String certOf, final String trust) {
        return Map.of(TcpTlsConfig.TLS, "true", TcpTlsConfig.CERT, resource(certOf + "-node.pem"), TcpTlsConfig.KEY,
            resource(certOf + "-node.key"), TcpTlsConfig.TRUST, resource(trust + "-ca.pem"));
    }

    private static Map<String, String> merge(final Map<String, String> a, final Map<String, String> b) {
        final Map<String, String> m = new HashMap<>(a);
        m.putAll(b);
        return m;
    }

    /** A publisher on {@code client} sends 100 frames to a subscriber on {@code server}; all arrive in order. */
    private static void framesFlow(final TcpTransport server, final TcpTransport client) {
        final long refusedBefore = server.refusedPeers() + client.refusedPeers();
        final RecordingSink sink = new RecordingSink();
        server.addSubscription(TOPIC, sink);
        final TransportPublication pub = client.addPublication(TOPIC);
        await("the subscription reaches the publisher").atMost(WAIT).until(pub::isConnected);
        for (long i = 0; i < 100; i++) {
            while (offer(pub, i, 16) != TransportStatus.OK) {
                Thread.onSpinWait();
            }
        }
        await("100 frames").atMost(WAIT).until(() -> sink.sequences.size() == 100);
        for (int i = 0; i < 100; i++) {
            assertEquals(i, sink.sequences.get(i), "in order");
        }
        assertEquals(refusedBefore, server.refusedPeers() + client.refusedPeers(), "no refusal between peers that authenticate");
    }

    /** {@code client} dials {@code server}; both refuse: nothing connects, no frame is delivered. */
    private static void bothRefuse(final TcpTransport server, final TcpTransport client, final String serverWhy, final String clientWhy) {
        final RecordingSink sink = new RecordingSink();
        server.addSubscription(TOPIC, sink);
        final TransportPublication pub = client.addPublication(TOPIC);
        await("the server refuses the client").atMost(WAIT).until(() -> server.refusedPeers() >= 1);
        await("the client refuses the server").atMost(WAIT).until(() -> client.refusedPeers() >= 1);
        assertTrue(server.lastRefusal().contains(serverWhy), server.lastRefusal());
        assertTrue(client.lastRefusal().contains(clientWhy), client.lastRefusal());
        assertFalse(pub.isConnected(), "the subscription never reached the refused publisher");
        assertEquals(TransportStatus.NOT_CONNECTED, pub.tryClaim(64));
        assertEquals(0, server.connectedPeers());
        assertEquals(0, client.connectedPeers());
        assertTrue(sink.sequences.isEmpty());
    }

    @Test
    void aPeerWithTheSecretIsAcceptedAndFramesFlow() {
        final TcpTransport server = transport(secret(SECRET), List.of());
        final TcpTransport client = transport(secret(SECRET), List.of(server.boundEndpoint()));
        framesFlow(server, client);
        assertNull(server.lastRefusal());
    }

    @Test
    void aPeerWithAWrongSecretIsRefusedByBothSides() {
        final TcpTransport server = transport(secret(SECRET), List.of());
        final TcpTransport client = transport(secret(OTHER_SECRET), List.of(server.boundEndpoint()));
        bothRefuse(server, client, "wrong bus secret", "wrong bus secret");
        assertTrue(server.lastRefusal().contains(TcpTransportConfig.SECRET_FILE), "says what to set: " + server.lastRefusal());
    }

    @Test
    void aPeerWithoutASecretIsRefusedAndANodeWithoutOneRefusesAPeerWithOne() {
        final TcpTransport server = transport(secret(SECRET), List.of());
        final TcpTransport client = transport(secret("none"), List.of(server.boundEndpoint()));
        bothRefuse(server, client, "it has no bus secret and this node requires one", "it has a bus secret and this node has none");
        assertEquals(server.refusedPeers(), server.counters().get("refusedPeers"), "in the transport's counters");
    }

    @Test
    void aRawPeerThatSkipsItsProofGetsNoSubscriptionAndDeliversNoFrame() throws Exception {
        final TcpTransport server = transport(secret(SECRET), List.of());
        final RecordingSink sink = new RecordingSink();
        server.addSubscription(TOPIC, sink);
        final TopicDescriptor announced = new TopicDescriptor("announced", 9, Delivery.RELIABLE, 1024);
        final TransportPublication serverPub = server.addPublication(announced);
        final int maxFrame = server.config().maxFrameBytes();
        // 1: claims a secret, then subscribes and sends data instead of its AUTH
        // 2: claims a secret and sends an AUTH of zeros
        // 3: no secret at all, then data
        final byte[][] streams = {
            concat(hello(TcpProtocol.VERSION, maxFrame, TcpProtocol.FLAG_SECRET), subscribe(announced.topicId()), data(TOPIC.topicId())),
            concat(hello(TcpProtocol.VERSION, maxFrame, TcpProtocol.FLAG_SECRET), auth(new byte[TcpProtocol.PROOF_BYTES]),
                data(TOPIC.topicId())),
            concat(hello(TcpProtocol.VERSION, maxFrame, 0), subscribe(announced.topicId()), data(TOPIC.topicId())),
        };
        final String[] why = {"no AUTH before its first message (type 2)", "wrong bus secret", "it has no bus secret"};
        for (int i = 0; i < streams.length; i++) {
            try (Socket socket = new Socket("127.0.0.1", server.boundAddress().getPort())) {
                final OutputStream out = socket.getOutputStream();
                out.write(streams[i]);
                out.flush();
                assertTrue(closedByPeer(socket), "the transport closes the connection of raw peer " + (i + 1));
            }
            final int refused = i + 1;
            await("raw peer " + refused + " refused").atMost(WAIT).until(() -> server.refusedPeers() == refused);
            assertTrue(server.lastRefusal().contains(why[i]), server.lastRefusal());
        }
        assertTrue(sink.sequences.isEmpty(), "no frame of an unauthenticated peer is delivered");
        assertEquals(0, server.framesWithoutSubscriber(), "no data message was even looked at");
        assertFalse(serverPub.isConnected(), "no subscription of an unauthenticated peer is accepted");
        assertEquals(0, server.connectedPeers());
        assertEquals(0, server.protocolErrors() + server.handshakeRejections() + server.handshakeTimeouts());
    }

    /**
     * A peer that keeps sending a reliable topic whose subscription pushes back, past the window this node granted
     * (it ignores its credit), is closed as a protocol error instead of growing the topic's queue without bound.
     */
    @Test
    void aRawPeerThatIgnoresItsCreditIsClosedAsAProtocolError() throws Exception {
        final TcpTransport server = transport(secret("none"), List.of());
        final RecordingSink sink = new RecordingSink();
        sink.refuse = true;
        server.addSubscription(TOPIC, sink);
        final long window = server.config().topicWindowBytes();
        final byte[] frame = data(TOPIC.topicId());
        final int frames = (int) (2 * window / frame.length) + 2;
        try (Socket socket = new Socket("127.0.0.1", server.boundAddress().getPort())) {
            final OutputStream out = socket.getOutputStream();
            out.write(hello(TcpProtocol.VERSION, server.config().maxFrameBytes(), 0));
            for (int i = 0; i < frames; i++) {
                out.write(frame);
            }
            out.flush();
            assertTrue(closedByPeer(socket), "the transport closes the connection of a peer past its credit");
        }
        await("protocol error counted").atMost(WAIT).until(() -> server.protocolErrors() == 1);
        assertTrue(sink.refusals.get() > 0, "the sink was offered a frame and refused it");
        assertTrue(sink.sequences.isEmpty(), "nothing was delivered");
    }

    @Test
    void garbageAndAHalfHandshakeAreCountedAndClosed() throws Exception {
        final TcpTransport server = transport(merge(secret(SECRET), Map.of(TcpTransportConfig.HANDSHAKE_TIMEOUT_MS, "300")), List.of());
        try (Socket socket = new Socket("127.0.0.1", server.boundAddress().getPort())) {
            socket.getOutputStream().write("GET / HTTP/1.1\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            assertTrue(closedByPeer(socket), "garbage closes the connection");
        }
        await("protocol error counted").atMost(WAIT).until(() -> server.protocolErrors() == 1);
        try (Socket socket = new Socket("127.0.0.1", server.boundAddress().getPort())) {
            socket.getOutputStream().write(hello(TcpProtocol.VERSION, server.config().maxFrameBytes(), TcpProtocol.FLAG_SECRET));
            assertTrue(closedByPeer(socket), "a hello without the AUTH that must follow it times out");
        }
        await("handshake timeout counted").atMost(WAIT).until(() -> server.handshakeTimeouts() == 1);
        assertEquals(0, server.refusedPeers());
        assertEquals(0, server.connectedPeers());
        // the transport is unharmed: a peer with the secret still connects and frames flow
        framesFlow(server, transport(secret(SECRET), List.of(server.boundEndpoint())));
    }

    @Test
    void busesWithTheSecretTalkAndTheBusStatsCountRefusals() throws Exception {
        final int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        final List<String> seedA = List.of("127.0.0.1:" + port);
        final Topic<String> topic = Topic.of("auth.bus", Codecs.utf8(), Delivery.RELIABLE);
        try (Bus a = bus(Map.of(TcpTransportConfig.SECRET, SECRET, TcpTransportConfig.BIND, seedA.get(0)), List.of());
             Bus b = bus(secret(SECRET), seedA);
             BusPublication<String> pub = b.publication(topic)) {
            StepVerifier.create(a.subscribe(topic).take(10))
                .then(() -> {
                    await("b's publication reaches a's subscription").atMost(WAIT).until(pub::isConnected);
                    for (int i = 0; i < 10; i++) {
                        while (pub.offer("m" + i) != PublishStatus.OK) {
                            Thread.onSpinWait();
                        }
                    }
                })
                .expectNext("m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9")
                .expectComplete()
                .verify(WAIT);
            try (Bus intruder = bus(secret(OTHER_SECRET), seedA)) {
                await("a refuses the intruder, in a's bus stats").atMost(WAIT)
                    .until(() -> a.stats().transportCounters().get("refusedPeers") >= 1);
                await("the intruder refuses a, in its bus stats").atMost(WAIT)
                    .until(() -> intruder.stats().transportCounters().get("refusedPeers") >= 1);
            }
            assertEquals(0L, b.stats().transportCounters().get("refusedPeers"), b.stats().toString());
        }
    }

    private static Bus bus(final Map<String, String> properties, final List<String> seeds) {
        final var builder = Bus.builder().name("auth-bus-" + NAMES.incrementAndGet()).transport("tcp").idleStrategy("backoff")
            .discovery(new StaticSeedDiscovery(Map.of("tcp", seeds)));
        properties.forEach(builder::transportProperty);
        return builder.build();
    }

    @Test
    void configurationErrorsNameTheKey() {
        assertMessage(secret("too-short"), TcpTransportConfig.SECRET + " has 9 bytes");
        assertMessage(Map.of(TcpTransportConfig.SECRET, SECRET, TcpTransportConfig.SECRET_FILE, "/x"), "Set only one of");
        assertMessage(Map.of(TcpTlsConfig.TLS, "yes"), TcpTlsConfig.TLS + "='yes': use true or false");
        assertMessage(Map.of(TcpTlsConfig.TRUST, resource("bus-ca.pem")), TcpTlsConfig.TRUST + " is set but " + TcpTlsConfig.TLS
            + " is not true");
        final Map<String, String> noCert = new HashMap<>(tls("bus", "bus"));
        noCert.remove(TcpTlsConfig.CERT);
        assertMessage(noCert, TcpTlsConfig.TLS + "=true needs " + TcpTlsConfig.CERT);
        assertMessage(merge(tls("bus", "bus"), Map.of(TcpTlsConfig.KEY, "/nonexistent/node.key")), TcpTlsConfig.KEY
            + "='/nonexistent/node.key' is not a readable file");
        assertMessage(merge(tls("bus", "bus"), Map.of(TcpTlsConfig.TRUST, resource("bus-node.key"))), TcpTlsConfig.TRUST + "='");
        assertMessage(merge(tls("bus", "bus"), Map.of(TcpTlsConfig.KEY, resource("bus-ca.pem"))), TcpTlsConfig.KEY + "='");
        final BusConfigurationException atBuild = assertThrows(BusConfigurationException.class, () -> Bus.builder().name("auth-bad")
            .transport("tcp").transportProperty(TcpTlsConfig.TLS, "true").build());
        assertTrue(atBuild.getMessage().contains(TcpTlsConfig.CERT), "fails when the bus is built: " + atBuild.getMessage());
    }

    private static void assertMessage(final Map<String, String> properties, final String expected) {
        final BusConfigurationException ex = assertThrows(BusConfigurationException.class, () -> TcpTransportConfig.from(properties));
        assertTrue(ex.getMessage().contains(expected), "expected '" + expected + "' in: " + ex.getMessage());
    }

    @Test
    void overTlsFramesFlowWithAndWithoutTheSecret() {
        final TcpTransport server = transport(tls("bus", "bus"), List.of());
        framesFlow(server, transport(tls("bus", "bus"), List.of(server.boundEndpoint())));
        final TcpTransport both = transport(merge(tls("bus", "bus"), secret(SECRET)), List.of());
        framesFlow(both, transport(merge(tls("bus", "bus"), secret(SECRET)), List.of(both.boundEndpoint())));
    }

    @Test
    void aTlsNodeAndAPlainNodeRefuseEachOther() {
        // a TLS node dials a plain one: the plain node sees a TLS ClientHello, the TLS node a plain hello
        final TcpTransport plain = transport(Map.of(), List.of());
        bothRefuse(plain, transport(tls("bus", "bus"), List.of(plain.boundEndpoint())), "it speaks TLS and this node does not",
            "it does not speak TLS");
        // a plain node dials a TLS one: the TLS node refuses its hello with a TLS alert, which the plain node recognises
        final TcpTransport tlsServer = transport(tls("bus", "bus"), List.of());
        bothRefuse(tlsServer, transport(Map.of(), List.of(tlsServer.boundEndpoint())), "it does not speak TLS",
            "it speaks TLS and this node does not");
    }

    @Test
    void garbageInATlsRecordIsCountedAndLeavesTheNodeWorking() throws Exception {
        final TcpTransport server = transport(tls("bus", "bus"), List.of());
        try (Socket socket = new Socket("127.0.0.1", server.boundAddress().getPort())) {
            // a TLS handshake record header, then bytes that are no ClientHello
            socket.getOutputStream().write(new byte[] {0x16, 3, 1, 0, 8, 1, 0, 0, 4, 'j', 'u', 'n', 'k'});
            assertTrue(closedByPeer(socket), "the TLS node closes the connection");
        }
        await("counted").atMost(WAIT).until(() -> server.protocolErrors() + server.refusedPeers() == 1);
        assertEquals(0, server.connectedPeers());
        framesFlow(server, transport(tls("bus", "bus"), List.of(server.boundEndpoint())));
    }

    @Test
    void aCertificateFromAnotherCaIsRefused() {
        // the client trusts the server's CA, but its own certificate comes from another CA
        final TcpTransport server = transport(tls("bus", "bus"), List.of());
        final TcpTransport client = transport(tls("other", "bus"), List.of(server.boundEndpoint()));
        bothRefuse(server, client, "TLS handshake failed", "TLS handshake failed");
        // the server's certificate is not trusted by a client of the other CA
        final TcpTransport stranger = transport(tls("other", "other"), List.of(server.boundEndpoint()));
        await("the stranger refuses the server's certificate").atMost(WAIT).until(() -> stranger.refusedPeers() >= 1);
        assertTrue(stranger.lastRefusal().contains(TcpTlsConfig.TRUST), stranger.lastRefusal());
        assertEquals(0, stranger.connectedPeers());
    }

    // ------------------------------------------------------------------ raw messages

    private static ByteBuffer le(final int capacity) {
        return ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static byte[] subscribe(final int topicId) {
        return le(4 + 12).putInt(12).put((byte) TcpProtocol.TYPE_SUBSCRIBE).putInt(topicId).put((byte) 1).putInt(1 << 20).putShort((short) 0)
            .array();
    }

    private static byte[] auth(final byte[] proof) {
        return le(4 + 1 + proof.length).putInt(1 + proof.length).put((byte) TcpProtocol.TYPE_AUTH).put(proof).array();
    }

    private static byte[] data(final int topicId) {
        final byte[] frame = new byte[FrameHeader.LENGTH + 8];
        FrameHeader.write(new org.agrona.concurrent.UnsafeBuffer(frame), 0, FrameHeader.FLAGS_UNFRAGMENTED, frame.length, topicId, 1, 0, 0);
        return le(4 + 1 + 4 + frame.length).putInt(1 + 4 + frame.length).put((byte) TcpProtocol.TYPE_DATA).putInt(topicId).put(frame).array();
    }

    private static byte[] concat(final byte[]... parts) {
        final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (final byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }
}
