package io.rdmabus.transport.tcp;

import java.io.IOException;
import java.net.ConnectException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.rdmabus.Bus;
import io.rdmabus.IdleStrategies;
import io.rdmabus.ThreadingMode;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.tck.InvokedBus;
import io.rdmabus.tck.TckFixture;

/**
 * TCK fixture for the TCP transport on loopback: every node listens on an ephemeral port and gets the endpoints of
 * the nodes created before it (still open) as seeds, so every pair of nodes is connected exactly once.
 */
final class TcpTckFixture implements TckFixture {
    private final List<TcpTransport> nodes = new ArrayList<>();
    private final Map<String, Integer> portsByBus = new ConcurrentHashMap<>();
    private final Map<String, String> properties;
    private final ThreadingMode threadingMode;

    TcpTckFixture(final Map<String, String> properties) {
        this(properties, ThreadingMode.SHARED);
    }

    /** @param threadingMode the buses' threading mode; INVOKER buses are driven by a loop thread, as an application would */
    TcpTckFixture(final Map<String, String> properties, final ThreadingMode threadingMode) {
        this.properties = Map.copyOf(properties);
        this.threadingMode = threadingMode;
    }

    @Override
    public String name() {
        return "tcp on loopback " + properties + ", threading " + threadingMode;
    }

    private synchronized List<String> seeds() {
        final List<String> seeds = new ArrayList<>();
        for (final TcpTransport node : nodes) {
            if (!node.isClosed()) {
                seeds.add(node.boundEndpoint());
            }
        }
        return seeds;
    }

    private synchronized void register(final String busName, final TcpTransport transport) {
        nodes.removeIf(TcpTransport::isClosed);
        nodes.add(transport);
        portsByBus.put(busName, transport.boundAddress().getPort());
    }

    @Override
    public Bus newBus(final String busName) {
        final TcpTransport transport = new TcpTransport(TcpTransportConfig.from(properties));
        final Bus bus = Bus.builder().name(busName).transport(transport).idleStrategy("backoff").threadingMode(threadingMode)
            .discovery(new StaticSeedDiscovery(Map.of("tcp", seeds()))).build();
        register(busName, transport);
        return InvokedBus.driven(bus, threadingMode);
    }

    @Override
    public Transport newRawTransport() {
        final TcpTransport transport = new TcpTransport(TcpTransportConfig.from(properties));
        final String name = "tck-raw-" + System.nanoTime();
        transport.start(new TransportContext(name, IdleStrategies.supplier("backoff"), Throwable::printStackTrace,
            new StaticSeedDiscovery(Map.of("tcp", seeds()))));
        register(name, transport);
        return transport;
    }

    @Override
    public int maxBestEffortFrameLength() {
        return TcpTransportConfig.from(properties).maxFrameBytes();
    }

    @Override
    public void assertTransportResourcesReleased(final String busName) {
        final Integer port = portsByBus.get(busName);
        if (port == null) {
            throw new AssertionError("bus " + busName + " was not created by this fixture");
        }
        try {
            new Socket("127.0.0.1", port).close();
            throw new AssertionError("bus " + busName + " closed but something still accepts connections on its port " + port);
        } catch (final ConnectException expected) {
            // nothing listens any more
        } catch (final IOException ex) {
            throw new AssertionError("probing the closed bus's port " + port + ": " + ex, ex);
        }
    }

    @Override
    public synchronized void close() {
        for (final TcpTransport node : nodes) {
            node.close();
        }
        nodes.clear();
    }
}
