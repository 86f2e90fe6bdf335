package io.rdmabus;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.ThreadLocalRandom;

import io.rdmabus.core.DefaultBus;
import io.rdmabus.spi.Discovery;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Builds a {@link Bus}. Every setting is validated in {@link #build()} with a message that says what to change. */
public final class BusBuilder {
    private static final Logger LOG = LoggerFactory.getLogger(BusBuilder.class);

    private String name = "bus-" + Integer.toHexString(ThreadLocalRandom.current().nextInt());
    private String transportName = "auto";
    private Transport transport;
    private final Map<String, String> transportProperties = new HashMap<>();
    private Discovery discovery = StaticSeedDiscovery.none();
    private String idleStrategy = "backoff";
    private String countersDir;

    BusBuilder() {
    }

    /** @param busName used in thread names and logs @return this */
    public BusBuilder name(final String busName) {
        this.name = busName;
        return this;
    }

    /**
     * @param factoryName a {@link TransportFactory#name()} on the class path (e.g. {@code rdma}, {@code aeron-udp},
     *                    {@code aeron-ipc}, {@code tcp}) or {@code auto} for the best available one
     * @return this
     */
    public BusBuilder transport(final String factoryName) {
        this.transportName = factoryName;
        this.transport = null;
        return this;
    }

    /** @param instance an unstarted transport the bus will own (start and close) @return this */
    public BusBuilder transport(final Transport instance) {
        this.transport = instance;
        return this;
    }

    /** @param key transport setting @param value its value @return this */
    public BusBuilder transportProperty(final String key, final String value) {
        transportProperties.put(key, value);
        return this;
    }

    /** @param peers where to find other buses (seed lists per transport) @return this */
    public BusBuilder discovery(final Discovery peers) {
        this.discovery = peers;
        return this;
    }

    /** @param strategyName one of {@link IdleStrategies#NAMES}, used by the bus's and the transport's agents @return this */
    public BusBuilder idleStrategy(final String strategyName) {
        this.idleStrategy = strategyName;
        return this;
    }

    /**
     * @param dir where the bus's counters file goes (read by {@code rdma-bus stats} from other processes), or
     *            {@code "off"} for none; unset: the {@code rdmabus.counters.dir} system property, else
     *            {@code /dev/shm/rdma-bus-<user>} (or {@code <java.io.tmpdir>/rdma-bus-<user>} without /dev/shm)
     * @return this
     */
    public BusBuilder countersDir(final String dir) {
        this.countersDir = dir;
        return this;
    }

    /**
     * @return a started bus
     * @throws BusConfigurationException for bad settings or when no transport is available
     */
    public Bus build() {
        if (name == null || name.isBlank()) {
            throw new BusConfigurationException("Bus name must not be blank");
        }
        if (discovery == null) {
            throw new BusConfigurationException("discovery is null: use StaticSeedDiscovery.none() when transports need none");
        }
        final var idle = IdleStrategies.supplier(idleStrategy);
        final Transport chosen = transport != null ? transport : createTransport();
        LOG.info("bus {}: transport {}", name, chosen.name());
        return new DefaultBus(name, chosen, idle, discovery, countersDir);
    }

    private Transport createTransport() {
        final List<TransportFactory> factories = new ArrayList<>();
        ServiceLoader.load(TransportFactory.class).forEach(factories::add);
        factories.sort(Comparator.comparingInt(TransportFactory::priority).reversed());
        if (factories.isEmpty()) {
            throw new BusConfigurationException("No transport on the class path: add io.rdmabus:tcp-fallback (Aeron, TCP) or "
                + "io.rdmabus:rdma-transport as a dependency");
        }
        final StringBuilder reasons = new StringBuilder();
        for (final TransportFactory factory : factories) {
            final boolean wanted = "auto".equals(transportName) || factory.name().equals(transportName);
            if (!wanted) {
                continue;
            }
            final String unavailable = factory.unavailableReason();
            if (unavailable == null) {
                if ("auto".equals(transportName)) {
                    LOG.info("bus {}: transport 'auto' chose '{}'{}", name, factory.name(), reasons.isEmpty() ? "" : " (" + reasons + ")");
                }
                return factory.create(Map.copyOf(transportProperties));
            }
            reasons.append(factory.name()).append(": ").append(unavailable).append("; ");
        }
        final List<String> names = factories.stream().map(TransportFactory::name).toList();
        if (reasons.isEmpty()) {
            throw new BusConfigurationException("Unknown transport '" + transportName + "': available are " + names + " or 'auto'");
        }
        throw new BusConfigurationException("No usable transport for '" + transportName + "': " + reasons
            + "pick another of " + names);
    }
}
