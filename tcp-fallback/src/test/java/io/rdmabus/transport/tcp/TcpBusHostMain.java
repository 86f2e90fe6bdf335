package io.rdmabus.transport.tcp;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.rdmabus.Bus;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.tck.remote.BusHost;
import io.rdmabus.tck.remote.BusNode;
import io.rdmabus.tck.remote.RemoteCodecs;

/**
 * The bus-host process of {@link TcpSplitTckTest}: serves TCP buses on loopback to the test JVM that started it, prints
 * {@code BUS-HOST-PORT <port>} once it listens, and exits 0 only if the test JVM connected and ended the session with
 * SHUTDOWN and nothing failed inside the host (1 otherwise), at the latest after the bounds below.
 */
public final class TcpBusHostMain {
    private TcpBusHostMain() {
    }

    /**
     * @param args none
     * @throws Exception if it cannot listen
     */
    public static void main(final String[] args) throws Exception {
        final BusNode.Factory factory = (busName, seeds) -> {
            final TcpTransport transport = new TcpTransport(TcpTransportConfig.from(Map.of()));
            final Bus bus = Bus.builder().name(busName).transport(transport).idleStrategy("backoff")
                .discovery(new StaticSeedDiscovery(Map.of("tcp", List.copyOf(seeds)))).build();
            return new BusNode(bus, transport.boundEndpoint());
        };
        final BusHost host = BusHost.start(new InetSocketAddress("127.0.0.1", 0), factory, RemoteCodecs.standard());
        System.out.println("BUS-HOST-PORT " + host.port());
        System.out.flush();
        final BusHost.Outcome outcome = host.awaitEnd(Duration.ofSeconds(60), Duration.ofMinutes(10));
        System.out.println("BUS-HOST-OUTCOME " + outcome);
        System.out.flush();
        System.exit(outcome.clean() ? 0 : 1);
    }
}
