package io.rdmabus.transport.aeron;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import io.rdmabus.IdleStrategies;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.TransportContext;

/** Helpers shared by the Aeron tests. */
final class AeronTestSupport {
    private AeronTestSupport() {
    }

    /** Every port {@link #freeUdpPort()} has handed out in this JVM. */
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    /**
     * @return a UDP port free on loopback right now that no earlier call in this JVM returned: a port probed and closed
     *     can come back from the next probe (Linux repeated one in 200 probes), and two buses of a test would then bind
     *     the same endpoint
     */
    static int freeUdpPort() {
        while (true) {
            try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
                if (HANDED_OUT.add(socket.getLocalPort())) {
                    return socket.getLocalPort();
                }
            } catch (final IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }
    }

    /** @param busName bus name @param errors collects agent errors @param seeds aeron-udp seeds @return a context */
    static TransportContext context(final String busName, final List<Throwable> errors, final List<String> seeds) {
        return new TransportContext(busName, IdleStrategies.supplier("backoff"), errors::add,
            new StaticSeedDiscovery(Map.of(AeronMedium.UDP.factoryName(), seeds)));
    }

    /** @return a fresh error list */
    static List<Throwable> errors() {
        return new CopyOnWriteArrayList<>();
    }

    /** @param marker a bus name @return names of live threads containing it */
    static Set<String> liveThreads(final String marker) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
            .filter(n -> n.contains(marker)).collect(Collectors.toSet());
    }
}
