package io.rdmabus.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.codec.Codec;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.tck.Recorder;
import io.rdmabus.tck.remote.BusHost;
import io.rdmabus.tck.remote.BusNode;
import io.rdmabus.tck.remote.RemoteBusClient;
import io.rdmabus.tck.remote.RemoteCodecs;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bus host's session life cycle and the proxy's refusals, with real TCP buses in this JVM: what the two-guest TCK
 * relies on to end guest 2 promptly and honestly (connected or not, clean or not), and demand crossing exactly.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BusHostSessionTest {
    private static final BusNode.Factory TCP = (busName, seeds) -> {
        final TcpTransport transport = new TcpTransport(TcpTransportConfig.from(Map.of()));
        final Bus bus = Bus.builder().name(busName).transport(transport).idleStrategy("backoff")
            .discovery(new StaticSeedDiscovery(Map.of("tcp", List.copyOf(seeds)))).build();
        return new BusNode(bus, transport.boundEndpoint());
    };

    private static BusHost host() throws Exception {
        return BusHost.start(new InetSocketAddress("127.0.0.1", 0), TCP, RemoteCodecs.standard());
    }

    @Test
    void aClientThatGivesUpBeforeConnectingEndsTheSessionAtOnceAndNotCleanly() throws Exception {
        final BusHost host = host();
        final long t0 = System.nanoTime();
        final BusHost.Outcome outcome = host.awaitEnd(Duration.ofSeconds(50), Duration.ofSeconds(50), () -> "its fixture failed");
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "took " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        assertFalse(outcome.connected());
        assertFalse(outcome.clean());
        assertTrue(outcome.reason().contains("gave up before connecting: its fixture failed"), outcome.reason());
    }

    @Test
    void noClientWithinTheConnectBoundIsNotClean() throws Exception {
        final BusHost.Outcome outcome = host().awaitEnd(Duration.ofSeconds(1), Duration.ofSeconds(50));
        assertFalse(outcome.connected());
        assertFalse(outcome.clean());
        assertTrue(outcome.reason().contains("no client connected within"), outcome.reason());
    }

    @Test
    void demandCrossesExactlyAndShutdownEndsTheSessionCleanly() throws Exception {
        final BusHost host = host();
        final CompletableFuture<BusHost.Outcome> outcome = CompletableFuture.supplyAsync(() -> {
            try {
                return host.awaitEnd(Duration.ofSeconds(30), Duration.ofSeconds(50));
            } catch (final InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
        try (RemoteBusClient client = RemoteBusClient.connect(new InetSocketAddress("127.0.0.1", host.port()), Duration.ofSeconds(10),
            RemoteCodecs.standard())) {
            final BusNode sub = client.newBus("session-sub", List.of());
            final BusNode pub = client.newBus("session-pub", List.of(sub.endpoint()));
            final Topic<String> topic = Topic.of("session.demand", Codecs.utf8(), Delivery.RELIABLE);
            final Recorder<String> rec = Recorder.manual();
            sub.bus().subscribeReceived(topic, SubscribeOptions.defaults()).subscribe(rec);
            rec.request(2);
            try (BusPublication<String> p = pub.bus().publication(topic)) {
                int sent = 0;
                final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (sent < 10 && System.nanoTime() < deadlineNs) {
                    if (p.offer("m" + sent) == PublishStatus.OK) {
                        sent++;
                    } else {
                        Thread.sleep(5);
                    }
                }
                assertEquals(10, sent, "the remote publication took " + sent + " of 10");
                assertTrue(rec.awaitCount(2, Duration.ofSeconds(10)), "got " + rec.count());
                Thread.sleep(300);
                assertEquals(List.of("m0", "m1"), rec.values(), "exactly the 2 requested, no more");
                rec.request(8);
                assertTrue(rec.awaitCount(10, Duration.ofSeconds(10)), "got " + rec.count());
            }
            rec.dispose();
            assertTrue(sub.bus().stats().subscriptions().isEmpty(), "dispose returned before the remote bus dropped the subscription");
            assertNull(rec.error());

            // refused clearly, never approximated
            final Codec<String> custom = new Codec<>() {
                @Override public int encodedLength(final String value) {
                    return value.length();
                }
                @Override public void encode(final String value, final MutableDirectBuffer buffer, final int offset) {
                    buffer.putStringWithoutLengthAscii(offset, value);
                }
                @Override public String decode(final DirectBuffer buffer, final int offset, final int length) {
                    return buffer.getStringWithoutLengthAscii(offset, length);
                }
                @Override public String name() {
                    return "custom-ascii";
                }
            };
            final UnsupportedOperationException codec = assertThrows(UnsupportedOperationException.class,
                () -> sub.bus().subscribe(Topic.of("session.custom", custom, Delivery.RELIABLE)));
            assertTrue(codec.getMessage().contains("custom-ascii"), codec.getMessage());
            final UnsupportedOperationException key = assertThrows(UnsupportedOperationException.class,
                () -> sub.bus().subscribe(topic, SubscribeOptions.<String>conflateLatest(v -> v.substring(0, 1))));
            assertTrue(key.getMessage().contains("not Serializable"), key.getMessage());
            client.shutdown();
        }
        final BusHost.Outcome done = outcome.get(20, TimeUnit.SECONDS);
        assertTrue(done.clean(), done.toString());
        assertEquals(2, done.busesCreated());
    }
}
