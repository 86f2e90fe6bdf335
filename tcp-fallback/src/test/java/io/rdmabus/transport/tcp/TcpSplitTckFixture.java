package io.rdmabus.transport.tcp;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.rdmabus.Bus;
import io.rdmabus.IdleStrategies;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.tck.remote.BusNode;
import io.rdmabus.tck.remote.RemoteBusClient;
import io.rdmabus.tck.remote.RemoteCodecs;
import io.rdmabus.tck.remote.SplitTckFixture;

/**
 * The split TCK over TCP on loopback: local buses in the test JVM, remote buses in a child JVM ({@link TcpBusHostMain})
 * started with the same class path and module flags. The child must exit 0 (clean session) when the fixture closes.
 */
final class TcpSplitTckFixture extends SplitTckFixture {
    private final Process child;
    private final List<TcpTransport> transports = new ArrayList<>();
    private final Map<Bus, TcpTransport> byBus = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, Integer> portsByBus = new java.util.concurrent.ConcurrentHashMap<>();

    private TcpSplitTckFixture(final RemoteBusClient client, final Process child) {
        super(client);
        this.child = child;
    }

    /** Starts the bus-host JVM and connects to it. */
    static TcpSplitTckFixture start() {
        try {
            final Process child = startChild();
            final CompletableFuture<Integer> port = new CompletableFuture<>();
            Thread.ofPlatform().daemon().name("bus-host-output").start(() -> pump(child, port));
            final int p = port.get(60, TimeUnit.SECONDS);
            final RemoteBusClient client = RemoteBusClient.connect(new InetSocketAddress("127.0.0.1", p), Duration.ofSeconds(30),
                RemoteCodecs.standard());
            return new TcpSplitTckFixture(client, child);
        } catch (final Exception ex) {
            throw new AssertionError("could not start the bus-host JVM: " + ex, ex);
        }
    }

    private static Process startChild() throws IOException {
        final List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (final String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            // the module flags the bus needs (Agrona, FFM), as surefire's argLine gives them to this JVM
            if (arg.startsWith("--add-") || arg.startsWith("--enable-native-access") || arg.startsWith("--sun-misc")) {
                cmd.add(arg);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
        cmd.add(TcpBusHostMain.class.getName());
        return new ProcessBuilder(cmd).redirectErrorStream(true).start();
    }

    private static void pump(final Process child, final CompletableFuture<Integer> port) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.startsWith("BUS-HOST-PORT ")) {
                    port.complete(Integer.parseInt(line.substring("BUS-HOST-PORT ".length()).trim()));
                }
                System.err.println("[bus-host] " + line);
            }
        } catch (final IOException | RuntimeException ex) {
            port.completeExceptionally(ex);
        }
        port.completeExceptionally(new IOException("the bus-host JVM ended before it listened"));
    }

    /** Warms both JVMs and the paths between them up, and fails early if nothing crosses. */
    void warmUpBothWays() {
        warmUp(200, Duration.ofSeconds(30));
    }

    @Override
    public String name() {
        return "tcp on loopback, buses split between this JVM and a bus-host JVM";
    }

    @Override
    protected BusNode newLocalBus(final String busName, final List<String> seeds) {
        final TcpTransport transport = new TcpTransport(TcpTransportConfig.from(Map.of()));
        final Bus bus = Bus.builder().name(busName).transport(transport).idleStrategy("backoff")
            .discovery(new StaticSeedDiscovery(Map.of("tcp", List.copyOf(seeds)))).build();
        synchronized (this) {
            transports.add(transport);
        }
        byBus.put(bus, transport);
        portsByBus.put(busName, transport.boundAddress().getPort());
        return new BusNode(bus, transport.boundEndpoint());
    }

    @Override
    protected boolean isLocalClosed(final Bus bus) {
        return byBus.get(bus).isClosed();
    }

    @Override
    protected Transport newLocalRawTransport(final List<String> seeds) {
        final TcpTransport transport = new TcpTransport(TcpTransportConfig.from(Map.of()));
        transport.start(new TransportContext("tck-raw-" + System.nanoTime(), IdleStrategies.supplier("backoff"), Throwable::printStackTrace,
            new StaticSeedDiscovery(Map.of("tcp", List.copyOf(seeds)))));
        synchronized (this) {
            transports.add(transport);
        }
        return transport;
    }

    @Override
    public int maxBestEffortFrameLength() {
        return TcpTransportConfig.from(Map.of()).maxFrameBytes();
    }

    @Override
    public void assertTransportResourcesReleased(final String busName) {
        final Integer port = portsByBus.get(busName);
        if (port == null) {
            throw new AssertionError("bus " + busName + " is not a local bus of this fixture");
        }
        try {
            new java.net.Socket("127.0.0.1", port).close();
            throw new AssertionError("bus " + busName + " closed but something still accepts connections on its port " + port);
        } catch (final java.net.ConnectException expected) {
            // nothing listens any more
        } catch (final IOException ex) {
            throw new AssertionError("probing the closed bus's port " + port + ": " + ex, ex);
        }
    }

    @Override
    protected synchronized void closeLocal() {
        for (final TcpTransport t : transports) {
            t.close();
        }
        transports.clear();
    }

    @Override
    public void close() {
        try {
            super.close();
        } finally {
            try {
                if (!child.waitFor(30, TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                    throw new AssertionError("the bus-host JVM did not exit within 30 s of the session's end");
                }
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
        if (child.exitValue() != 0) {
            throw new AssertionError("the bus-host JVM exited " + child.exitValue() + " (not a clean session; its output is above, [bus-host])");
        }
    }
}
