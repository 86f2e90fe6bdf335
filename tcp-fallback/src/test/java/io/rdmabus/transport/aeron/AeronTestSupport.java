package io.rdmabus.transport.aeron;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
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

    /** The kernel's range for sockets bound to port 0, read once. */
    private static final int[] EPHEMERAL = ephemeralRange(Path.of("/proc/sys/net/ipv4/ip_local_port_range"));

    /** How many ports below (or above) the ephemeral range {@link #freeUdpPort()} picks from. */
    static final int WINDOW = 8_000;

    /**
     * A UDP port free on loopback right now, outside the kernel's ephemeral range, that no earlier call in this JVM
     * returned. Outside the range because a bus's subscriptions bind their receive ports as port 0: a port inside it,
     * probed free and bound only later by a bus, can be taken meanwhile by any such socket, and that bus then fails with
     * "Address already in use". Never the same port twice: a port probed and closed can come back from the next probe,
     * and two buses of a test would then bind the same endpoint.
     *
     * @return the port
     */
    static int freeUdpPort() {
        final int[] window = window(EPHEMERAL);
        for (int attempt = 0; attempt < 10 * WINDOW; attempt++) {
            final int port = ThreadLocalRandom.current().nextInt(window[0], window[1] + 1);
            if (!HANDED_OUT.contains(port) && bindable(port) && HANDED_OUT.add(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free UDP port on loopback in " + window[0] + "-" + window[1]);
    }

    /** @param range the ephemeral range @return a window of {@link #WINDOW} ports below it, or else above it */
    static int[] window(final int[] range) {
        if (range[0] - WINDOW >= 1024) {
            return new int[] {range[0] - WINDOW, range[0] - 1};
        }
        if (range[1] + WINDOW <= 65_535) {
            return new int[] {range[1] + 1, range[1] + WINDOW};
        }
        throw new IllegalStateException("the ephemeral port range " + range[0] + "-" + range[1] + " leaves no " + WINDOW
            + " ports for the Aeron tests' endpoints below or above it: narrow net.ipv4.ip_local_port_range");
    }

    /** @param file the kernel's ip_local_port_range @return its low and high port; Linux's default when it is absent */
    static int[] ephemeralRange(final Path file) {
        if (!Files.isReadable(file)) {
            return new int[] {32_768, 60_999};
        }
        try {
            final String[] parts = Files.readAllLines(file).get(0).trim().split("\\s+"); // readString of a procfs file can stop after 1 byte
            return new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1])};
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** @return the ephemeral range in effect */
    static int[] ephemeralRange() {
        return EPHEMERAL.clone();
    }

    private static boolean bindable(final int port) {
        try (DatagramSocket socket = new DatagramSocket(port, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort() == port;
        } catch (final SocketException taken) {
            return false;
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
