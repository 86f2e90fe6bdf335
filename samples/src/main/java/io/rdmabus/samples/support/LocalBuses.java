package io.rdmabus.samples.support;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

import io.rdmabus.Bus;
import io.rdmabus.BusBuilder;
import io.rdmabus.BusConfigurationException;
import io.rdmabus.IdleStrategies;
import io.rdmabus.ThreadingMode;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.TransportFactory;

/**
 * Several buses in one JVM that reach each other, as if each were its own process: the samples, the CLI and the
 * benchmarks use one bus per role. What "reach each other" needs depends on the transport:
 * <ul>
 *   <li>{@code aeron-ipc}: one shared media driver ({@link SharedMediaDriver}, property {@code aeron.dir});</li>
 *   <li>{@code aeron-udp}: a distinct loopback control endpoint per bus, every endpoint given to every bus as a seed, and
 *   one shared media driver idling with the buses' idle strategy: frames still cross loopback UDP, but one driver thread
 *   sends and receives for all the buses instead of one thread per bus (with two buses on a 2-core machine, {@code rdma-bus
 *   ping}'s p99 round trip was lower in 7 of 8 alternating runs, p99.9 in all 8: docs/benchmarks.md);</li>
 *   <li>{@code tcp}: a distinct loopback listen port per bus; each bus dials the buses created before it;</li>
 *   <li>anything else (e.g. {@code rdma}): the transport's defaults.</li>
 * </ul>
 * {@code auto} is resolved the way {@link BusBuilder} does (highest-priority available factory), and the builders
 * still get {@code "auto"} so the bus itself makes (and reports) the choice; a mismatch fails fast.
 */
public final class LocalBuses implements AutoCloseable {
    private static final String LOOPBACK = "127.0.0.1";

    private final String requested;
    private final String resolved;
    private final String idleStrategy;
    private final List<String> endpoints = new ArrayList<>();
    /** The endpoints' sockets, one per bus not yet created (released as its bus is built, or at close). */
    private final List<Reservation> reservations = new ArrayList<>();
    private final List<Bus> buses = new ArrayList<>();
    private final SharedMediaDriver driver;
    private final int capacity;

    private ThreadingMode threadingMode = ThreadingMode.SHARED;

    private LocalBuses(final String requested, final String resolved, final int capacity, final String idleStrategy) {
        this.requested = requested;
        this.resolved = resolved;
        this.capacity = capacity;
        this.idleStrategy = idleStrategy;
        this.driver = switch (resolved) {
            case "aeron-ipc" -> SharedMediaDriver.launch("local");
            case "aeron-udp" -> SharedMediaDriver.launch("local-udp", IdleStrategies.supplier(idleStrategy).get());
            default -> null;
        };
        if ("aeron-udp".equals(resolved) || "tcp".equals(resolved)) {
            reservations.addAll(reserve(capacity, "aeron-udp".equals(resolved)));
            for (final Reservation reservation : reservations) {
                endpoints.add(LOOPBACK + ":" + reservation.port());
            }
        }
    }

    /**
     * A loopback port held by an open socket until {@link #release()}: a bus's endpoint from the group's creation until
     * the bus binds it, so nothing else binds it meanwhile (a port probed and closed at once can come back from the
     * next probe, or be taken by an earlier bus's own sockets, and two sockets would then try to bind it).
     */
    private record Reservation(int port, Closeable socket) {
        void release() {
            try {
                socket.close();
            } catch (final IOException ignored) {
                // a socket that cannot close keeps its port; the bus that wants it fails to bind and says so
            }
        }
    }

    /** Opens {@code count} sockets on loopback ports the kernel picks; all different, since every one stays open. */
    private static List<Reservation> reserve(final int count, final boolean udp) {
        final List<Reservation> reserved = new ArrayList<>(count);
        try {
            for (int i = 0; i < count; i++) {
                if (udp) {
                    final DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress());
                    reserved.add(new Reservation(socket.getLocalPort(), socket));
                } else {
                    final ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                    reserved.add(new Reservation(socket.getLocalPort(), socket));
                }
            }
            return reserved;
        } catch (final IOException ex) {
            reserved.forEach(Reservation::release);
            throw new UncheckedIOException(ex);
        }
    }

    /** @return {@code count} different loopback ports, free right now (reserved together, then released) */
    static int[] freePorts(final int count, final boolean udp) {
        final List<Reservation> reserved = reserve(count, udp);
        reserved.forEach(Reservation::release);
        return reserved.stream().mapToInt(Reservation::port).toArray();
    }

    /**
     * @param transport a transport factory name or {@code auto}
     * @param maxBuses  how many buses will be created (UDP/TCP endpoints are reserved up front)
     * @return the group, with no bus yet
     * @throws BusConfigurationException if the transport is unknown or unavailable
     */
    public static LocalBuses create(final String transport, final int maxBuses) {
        return create(transport, maxBuses, "backoff");
    }

    /**
     * @param transport    a transport factory name or {@code auto}
     * @param maxBuses     how many buses will be created
     * @param idleStrategy idle strategy name for every bus (see {@link io.rdmabus.IdleStrategies#NAMES})
     * @return the group, with no bus yet
     */
    public static LocalBuses create(final String transport, final int maxBuses, final String idleStrategy) {
        if (maxBuses < 1) {
            throw new BusConfigurationException("LocalBuses needs maxBuses >= 1, was " + maxBuses);
        }
        return new LocalBuses(transport, resolve(transport), maxBuses, idleStrategy);
    }

    /**
     * @param transport a factory name or {@code auto}
     * @return the factory name {@code Bus.builder().transport(transport)} will use
     * @throws BusConfigurationException if it is unknown or unavailable here
     */
    public static String resolve(final String transport) {
        final List<TransportFactory> factories = factories();
        final List<String> names = factories.stream().map(TransportFactory::name).toList();
        for (final TransportFactory f : factories) {
            if (("auto".equals(transport) || f.name().equals(transport)) && f.unavailableReason() == null) {
                return f.name();
            }
        }
        for (final TransportFactory f : factories) {
            if (f.name().equals(transport)) {
                throw new BusConfigurationException("Transport '" + transport + "' is not usable here: " + f.unavailableReason()
                    + "; pick another of " + names + " or 'auto'");
            }
        }
        throw new BusConfigurationException("Unknown transport '" + transport + "': available are " + names + " or 'auto'");
    }

    /** @return the transport factories on the class path, highest priority first */
    public static List<TransportFactory> factories() {
        final List<TransportFactory> factories = new ArrayList<>();
        ServiceLoader.load(TransportFactory.class).forEach(factories::add);
        factories.sort(Comparator.comparingInt(TransportFactory::priority).reversed());
        return factories;
    }

    /**
     * @param mode the threading mode of the buses created from now on (default {@link ThreadingMode#SHARED})
     * @return this
     */
    public LocalBuses threadingMode(final ThreadingMode mode) {
        this.threadingMode = mode;
        return this;
    }

    /** @return {@code host:port} of each bus of the group, by creation order (UDP and TCP; empty for the others) */
    List<String> endpoints() {
        return List.copyOf(endpoints);
    }

    /** @return the transport name every bus of this group uses */
    public String transport() {
        return resolved;
    }

    /**
     * @return the transport and how the group's buses share this process, for a report's first line: e.g.
     *     {@code aeron-udp (2 buses in this process, one media driver)}
     */
    public String describe() {
        return resolved + " (" + capacity + " buses in this process" + (driver == null ? "" : ", one media driver") + ")";
    }

    /** @return the shared driver directory for {@code aeron-ipc} and {@code aeron-udp}, else {@code null} */
    public String aeronDirectory() {
        return driver == null ? null : driver.directory();
    }

    /**
     * @param busName the bus's name (thread names, logs)
     * @return a started bus reaching every other bus of this group
     * @throws BusConfigurationException when more than {@code maxBuses} are asked for
     */
    public Bus newBus(final String busName) {
        final int index = buses.size();
        if (index >= capacity) {
            throw new BusConfigurationException("LocalBuses was created for " + capacity + " buses; raise maxBuses");
        }
        final BusBuilder builder = Bus.builder().name(busName).transport(requested).idleStrategy(idleStrategy)
            .threadingMode(threadingMode);
        switch (resolved) {
            case "aeron-ipc" -> builder.transportProperty("aeron.dir", driver.directory());
            case "aeron-udp" -> builder.transportProperty("endpoint", endpoints.get(index)).transportProperty("aeron.dir", driver.directory())
                .discovery(new StaticSeedDiscovery(Map.of("aeron-udp", List.copyOf(endpoints))));
            case "tcp" -> builder.transportProperty("tcp.bind", endpoints.get(index))
                .discovery(new StaticSeedDiscovery(Map.of("tcp", List.copyOf(endpoints.subList(0, index)))));
            default -> {
                // transports without in-JVM peers settings (e.g. rdma) use their defaults
            }
        }
        if (index < reservations.size()) {
            reservations.get(index).release();
        }
        final Bus bus = builder.build();
        if (!bus.transportName().equals(resolved)) {
            bus.close();
            throw new BusConfigurationException("Transport '" + requested + "' resolved to '" + bus.transportName() + "', expected '"
                + resolved + "'; name the transport explicitly");
        }
        buses.add(bus);
        return bus;
    }

    /** Closes the buses (newest first), then the shared driver, and releases the endpoints no bus took. */
    @Override
    public void close() {
        reservations.forEach(Reservation::release);
        RuntimeException first = null;
        for (int i = buses.size() - 1; i >= 0; i--) {
            try {
                buses.get(i).close();
            } catch (final RuntimeException ex) {
                first = first == null ? ex : first;
            }
        }
        buses.clear();
        if (driver != null) {
            driver.close();
        }
        if (first != null) {
            throw first;
        }
    }

    /** @return a UDP port free on loopback right now */
    public static int freeUdpPort() {
        return freePorts(1, true)[0];
    }

    /** @return a TCP port free on loopback right now */
    public static int freeTcpPort() {
        return freePorts(1, false)[0];
    }
}
