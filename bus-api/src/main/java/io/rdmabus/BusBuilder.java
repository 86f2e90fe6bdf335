package io.rdmabus;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

import io.rdmabus.config.BusConfig;
import io.rdmabus.config.ConfigSources;
import io.rdmabus.config.ConfigValue;
import io.rdmabus.core.DefaultBus;
import io.rdmabus.spi.Discovery;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds a {@link Bus}. Every setting is validated in {@link #build()} with a message that says what to change. Settings
 * can also come from outside code ({@link #fromEnvironment()}, {@link #configFile(Path)}): those win over the calls here,
 * see {@link BusConfig} for the keys and the precedence.
 */
public final class BusBuilder {
    private static final Logger LOG = LoggerFactory.getLogger(BusBuilder.class);

    private final ConfigSources config = new ConfigSources();
    private Transport transport;
    private Discovery discovery = StaticSeedDiscovery.none();

    BusBuilder() {
    }

    /** @param busName used in thread names and logs ({@value BusConfig#NAME}) @return this */
    public BusBuilder name(final String busName) {
        config.code(BusConfig.NAME, busName);
        return this;
    }

    /**
     * @param factoryName a {@link TransportFactory#name()} on the class path (e.g. {@code rdma}, {@code aeron-udp},
     *                    {@code aeron-ipc}, {@code tcp}) or {@code auto} for the best available one ({@value BusConfig#TRANSPORT})
     * @return this
     */
    public BusBuilder transport(final String factoryName) {
        config.code(BusConfig.TRANSPORT, factoryName);
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
        config.code(key, value);
        return this;
    }

    /** @param peers where to find other buses (seed lists per transport; {@value BusConfig#SEEDS} outside code) @return this */
    public BusBuilder discovery(final Discovery peers) {
        this.discovery = peers;
        if (peers instanceof StaticSeedDiscovery s) {
            final List<String> seeds = new ArrayList<>();
            s.seeds().forEach((t, endpoints) -> endpoints.forEach(e -> seeds.add(t + "=" + e)));
            config.code(BusConfig.SEEDS, String.join(",", seeds));
        } else {
            config.code(BusConfig.SEEDS, peers == null ? "" : peers.getClass().getSimpleName()); // null is refused by build()
        }
        return this;
    }

    /**
     * @param strategyName one of {@link IdleStrategies#NAMES}, used by the bus's and the transport's agents
     *                     ({@value BusConfig#IDLE_STRATEGY})
     * @return this
     */
    public BusBuilder idleStrategy(final String strategyName) {
        config.code(BusConfig.IDLE_STRATEGY, strategyName);
        return this;
    }

    /**
     * @param mode which threads run the bus's agents (default {@link ThreadingMode#SHARED}; see {@link ThreadingMode};
     *             {@value BusConfig#THREADING_MODE})
     * @return this
     */
    public BusBuilder threadingMode(final ThreadingMode mode) {
        config.code(BusConfig.THREADING_MODE, mode == null ? "" : mode.name().toLowerCase(java.util.Locale.ROOT));
        return this;
    }

    /**
     * @param dir where the bus's counters file goes (read by {@code rdma-bus stats} from other processes), or
     *            {@code "off"} for none ({@value BusConfig#COUNTERS_DIR}); unset: {@code /dev/shm/rdma-bus-<user>} (or
     *            {@code <java.io.tmpdir>/rdma-bus-<user>} without /dev/shm)
     * @return this
     */
    public BusBuilder countersDir(final String dir) {
        config.code(BusConfig.COUNTERS_DIR, dir);
        return this;
    }

    /**
     * Reads settings from a properties file; they win over the calls of this builder.
     *
     * @param file a properties file (UTF-8) with {@code rdmabus.*} and transport keys; it must exist
     * @return this
     */
    public BusBuilder configFile(final Path file) {
        config.file(file);
        return this;
    }

    /**
     * Reads settings from system properties, environment variables and the file {@value BusConfig#CONFIG_FILE} or
     * {@value BusConfig#CONFIG_FILE_ENV} names; they win over files given to {@link #configFile} and the calls of this builder.
     *
     * @return this
     */
    public BusBuilder fromEnvironment() {
        config.fromEnvironment();
        return this;
    }

    /**
     * @param key   a configuration key ({@code rdmabus.*} or a transport property)
     * @param value the value a command line flag gave: it wins over every other source
     * @return this
     */
    public BusBuilder commandLine(final String key, final String value) {
        config.commandLine(key, value);
        return this;
    }

    /**
     * @return the settings {@link #build()} would use, each with its source
     * @throws BusConfigurationException for an unknown key, a bad value or no usable transport
     */
    public BusConfig effectiveConfig() {
        final List<TransportFactory> factories = new ArrayList<>();
        ServiceLoader.load(TransportFactory.class).forEach(factories::add);
        return BusConfig.resolve(config, factories, transport);
    }

    /**
     * @return a started bus
     * @throws BusConfigurationException for bad settings or when no transport is available
     */
    public Bus build() {
        if (discovery == null) {
            throw new BusConfigurationException("discovery is null: use StaticSeedDiscovery.none() when transports need none");
        }
        final BusConfig effective = effectiveConfig();
        final var idle = IdleStrategies.supplier(effective.idleStrategy());
        final Discovery peers = effective.seeds() != null ? new StaticSeedDiscovery(effective.seeds()) : discovery;
        final Transport chosen = transport != null ? transport : effective.createTransport();
        final ConfigValue chosenBy = effective.value(BusConfig.TRANSPORT);
        LOG.info("bus {}: transport {} ({})", effective.name(), chosenBy.value(), chosenBy.description().startsWith("auto")
            ? chosenBy.description() : "from " + chosenBy.source());
        final String oversubscribed = spinningWarning(effective.value(BusConfig.IDLE_STRATEGY), effective.threadingMode(),
            Runtime.getRuntime().availableProcessors());
        if (oversubscribed != null) {
            LOG.warn("bus {}: {}", effective.name(), oversubscribed);
        }
        return new DefaultBus(effective.name(), chosen, idle, peers, effective.threadingMode(), effective.countersDir());
    }

    /**
     * {@code busy-spin} where the bus's spinning threads and the application's own thread outnumber the CPUs: they take
     * the CPU from each other, so latency gets worse, not better (on the 1-vCPU rxe guests the round trip went from
     * about 2x perftest's with {@code backoff} to 6-8x; docs/benchmarks.md, "Current results").
     *
     * @param idle the idle strategy setting
     * @param mode the threading mode: {@code SHARED} spins one thread of the bus, {@code DEDICATED} at least two (the
     *             delivery agent and the transport's), {@code INVOKER} none (the application's thread drives the bus)
     * @param cpus the CPUs this JVM may use
     * @return a warning naming the key and its source, or null when nothing is oversubscribed
     */
    static String spinningWarning(final ConfigValue idle, final ThreadingMode mode, final int cpus) {
        if (!IdleStrategies.BUSY_SPIN.equals(idle.value())) {
            return null;
        }
        final int spinning = switch (mode) {
            case SHARED -> 1;
            case DEDICATED -> 2;
            case INVOKER -> 0;
        };
        if (spinning == 0 || spinning + 1 <= cpus) {
            return null;
        }
        return BusConfig.IDLE_STRATEGY + "=" + IdleStrategies.BUSY_SPIN + " (from " + idle.source() + ") in " + mode + " mode spins "
            + (spinning == 1 ? "one thread"
            : "at least " + spinning + " threads") + " of the bus, which with the application's own thread outnumber the " + cpus
            + " CPU(s) this JVM may use: they take the CPU from each other and latency gets worse, not better. Use backoff (the "
            + "default) unless every spinning thread has a core of its own.";
    }
}
