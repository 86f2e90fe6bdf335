package io.rdmabus.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import io.rdmabus.BusConfigurationException;
import io.rdmabus.spi.PropertyDescriptor;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The resolver on its own: which source wins, what each error says. The environment and system properties are given
 * as maps (never the process's). The factories here only declare properties; a bus built from a file on a real
 * transport is in tcp-fallback's {@code ConfigFileTcpTest}.
 */
class BusConfigTest {
    /** Declares keys like a transport; {@link #create} refuses everything, naming the key it was given. */
    private record Declaring(String name, int priority, String prefix, Map<String, PropertyDescriptor> properties) implements TransportFactory {
        @Override
        public String unavailableReason() {
            return null;
        }

        @Override
        public String propertyPrefix() {
            return prefix;
        }

        @Override
        public Transport create(final Map<String, String> given) {
            throw new BusConfigurationException("refused " + given.keySet() + ": need 1 <= min <= max");
        }
    }

    private static final TransportFactory TCP = new Declaring("tcp", 10, "tcp.", PropertyDescriptor.declare(
        List.of("tcp.bind", "tcp.io.threads", "tcp.secret"),
        PropertyDescriptor.text("tcp.bind", "127.0.0.1:0", "listen"),
        PropertyDescriptor.integer("tcp.io.threads", 1, 1, 2, "threads")));
    private static final TransportFactory AERON = new Declaring("aeron-udp", 50, "aeron.", PropertyDescriptor.declare(
        List.of("aeron.dir", "mtu", "driver.threading"),
        PropertyDescriptor.integer("mtu", 1408, 64, 65504, "mtu"),
        PropertyDescriptor.choice("driver.threading", "shared", "threading", "shared", "dedicated")));
    private static final List<TransportFactory> FACTORIES = List.of(TCP, AERON);

    @TempDir
    Path dir;

    private Path file(final String... lines) throws IOException {
        final Path f = dir.resolve("bus-" + System.nanoTime() + ".properties");
        Files.write(f, List.of(lines));
        return f;
    }

    private static BusConfig resolve(final ConfigSources sources) {
        return BusConfig.resolve(sources, FACTORIES, null);
    }

    private static void assertValue(final BusConfig config, final String key, final String value, final String source) {
        final ConfigValue v = config.value(key);
        assertEquals(value, v.value(), key + ": " + config);
        assertEquals(source, v.source(), key + ": " + config);
    }

    @Test
    void eachSourceBeatsTheOnesBelowIt() throws IOException {
        final Path f = file("rdmabus.transport=tcp", "rdmabus.idle-strategy=yielding", "tcp.io.threads=2", "tcp.bind=10.0.0.1:7701",
            "rdmabus.name=from-file");
        final ConfigSources sources = new ConfigSources().code(BusConfig.IDLE_STRATEGY, "busy-spin").code("tcp.io.threads", "1")
            .code(BusConfig.NAME, "from-code").code("tcp.bind", "127.0.0.1:1").file(f)
            .environment(Map.of("RDMABUS_IDLE_STRATEGY", "sleeping", "TCP_BIND", "10.0.0.2:7701"),
                Map.of("tcp.bind", "10.0.0.3:7701"));
        final BusConfig config = resolve(sources);
        assertValue(config, BusConfig.NAME, "from-file", "file:" + f);
        assertValue(config, BusConfig.TRANSPORT, "tcp", "file:" + f);
        assertValue(config, "tcp.io.threads", "2", "file:" + f);
        assertValue(config, BusConfig.IDLE_STRATEGY, "sleeping", "env:RDMABUS_IDLE_STRATEGY");
        assertValue(config, "tcp.bind", "10.0.0.3:7701", "sysprop:tcp.bind");
        assertEquals(Map.of("tcp.bind", "10.0.0.3:7701", "tcp.io.threads", "2"), config.transportProperties());

        sources.commandLine("tcp.bind", "10.0.0.4:7701");
        assertValue(resolve(sources), "tcp.bind", "10.0.0.4:7701", ConfigValue.COMMAND_LINE);
    }

    @Test
    void codeBeatsDefaultsAndDefaultsAreListedWithTheirSource() {
        final BusConfig config = resolve(new ConfigSources().code(BusConfig.TRANSPORT, "tcp").code("tcp.io.threads", "2"));
        assertValue(config, "tcp.io.threads", "2", ConfigValue.CODE);
        assertValue(config, "tcp.bind", "127.0.0.1:0", ConfigValue.DEFAULT);
        assertValue(config, BusConfig.IDLE_STRATEGY, "backoff", ConfigValue.DEFAULT);
        assertTrue(config.name().startsWith("bus-"), config.name());
        assertEquals(Map.of("tcp.io.threads", "2"), config.transportProperties(), "defaults are the transport's own, not passed");
        assertNull(config.seeds(), "no seeds from outside: the discovery given in code stays");
    }

    @Test
    void theFileNamedOutsideCodeBeatsTheOneNamedInCode() throws IOException {
        final Path inCode = file("rdmabus.transport=tcp", "tcp.io.threads=1", "rdmabus.name=code-file");
        final Path outside = file("tcp.io.threads=2");
        final BusConfig config = resolve(new ConfigSources().file(inCode)
            .environment(Map.of(), Map.of(BusConfig.CONFIG_FILE, outside.toString())));
        assertValue(config, "tcp.io.threads", "2", "file:" + outside);
        assertValue(config, BusConfig.NAME, "code-file", "file:" + inCode);
        final BusConfig byEnv = resolve(new ConfigSources().code(BusConfig.TRANSPORT, "tcp")
            .environment(Map.of(BusConfig.CONFIG_FILE_ENV, outside.toString()), Map.of()));
        assertValue(byEnv, "tcp.io.threads", "2", "file:" + outside);
    }

    @Test
    void aTransportsUnprefixedKeysTakeItsPrefixOutsideCode() {
        final BusConfig config = resolve(new ConfigSources().code(BusConfig.TRANSPORT, "aeron-udp").code("driver.threading", "dedicated")
            .environment(Map.of("AERON_MTU", "8192", "AERON_DIR", "/dev/shm/x"), Map.of()));
        assertValue(config, "aeron.mtu", "8192", "env:AERON_MTU");
        assertValue(config, "aeron.driver.threading", "dedicated", ConfigValue.CODE);
        assertValue(config, "aeron.dir", "/dev/shm/x", "env:AERON_DIR");
        assertEquals(Map.of("mtu", "8192", "driver.threading", "dedicated", "aeron.dir", "/dev/shm/x"), config.transportProperties());
    }

    @Test
    void anUnknownKeyInAFileFailsNamingItsSourceWithASuggestion() throws IOException {
        final Path f = file("rdmabus.transport=tcp", "tcp.io.thread=2");
        final var ex = assertThrows(BusConfigurationException.class, () -> resolve(new ConfigSources().file(f)));
        assertTrue(ex.getMessage().contains("'tcp.io.thread' (from file:" + f + ")"), ex.getMessage());
        assertTrue(ex.getMessage().contains("did you mean tcp.io.threads?"), ex.getMessage());
        assertTrue(ex.getMessage().contains("tcp.bind"), "lists the known keys: " + ex.getMessage());

        final var bus = assertThrows(BusConfigurationException.class,
            () -> resolve(new ConfigSources().environment(Map.of(), Map.of("rdmabus.idle.strategy", "yielding"))));
        assertTrue(bus.getMessage().contains("'rdmabus.idle.strategy' (from sysprop:rdmabus.idle.strategy)")
            && bus.getMessage().contains("did you mean rdmabus.idle-strategy?"), bus.getMessage());

        final var noPrefix = assertThrows(BusConfigurationException.class, () -> resolve(new ConfigSources().file(file("idle=yielding"))));
        assertTrue(noPrefix.getMessage().contains("keys start with one of [rdmabus., tcp., aeron.]"), noPrefix.getMessage());

        final var code = assertThrows(BusConfigurationException.class,
            () -> resolve(new ConfigSources().code(BusConfig.TRANSPORT, "tcp").code("tcp.nope", "1")));
        assertTrue(code.getMessage().contains("Unknown tcp key 'tcp.nope' (from code)") && code.getMessage().contains("tcp.bind"), code.getMessage());
    }

    @Test
    void aBadValueFailsNamingKeySourceAndWhatIsAllowed() {
        final var number = assertThrows(BusConfigurationException.class, () -> resolve(new ConfigSources().code(BusConfig.TRANSPORT, "tcp")
            .environment(Map.of("TCP_IO_THREADS", "three"), Map.of())));
        assertEquals("Bad value 'three' for tcp.io.threads (from env:TCP_IO_THREADS): not an integer, expected an integer 1..2",
            number.getMessage());
        final var range = assertThrows(BusConfigurationException.class, () -> resolve(new ConfigSources().code(BusConfig.TRANSPORT, "tcp")
            .environment(Map.of(), Map.of("tcp.io.threads", "3"))));
        assertTrue(range.getMessage().contains("tcp.io.threads (from sysprop:tcp.io.threads): out of range, expected an integer 1..2"),
            range.getMessage());
        final var choice = assertThrows(BusConfigurationException.class, () -> resolve(new ConfigSources().code(BusConfig.TRANSPORT, "aeron-udp")
            .commandLine("driver.threading", "many")));
        assertTrue(choice.getMessage().contains("aeron.driver.threading (from command line): expected one of shared, dedicated"),
            choice.getMessage());
        final var idle = assertThrows(BusConfigurationException.class,
            () -> resolve(new ConfigSources().environment(Map.of("RDMABUS_IDLE_STRATEGY", "lazy"), Map.of())));
        assertTrue(idle.getMessage().contains("'lazy' for rdmabus.idle-strategy (from env:RDMABUS_IDLE_STRATEGY)")
            && idle.getMessage().contains("busy-spin, yielding, backoff, sleeping"), idle.getMessage());
        final var transport = assertThrows(BusConfigurationException.class,
            () -> resolve(new ConfigSources().environment(Map.of("RDMABUS_TRANSPORT", "tpc"), Map.of())));
        assertTrue(transport.getMessage().contains("Unknown transport 'tpc' (rdmabus.transport from env:RDMABUS_TRANSPORT)")
            && transport.getMessage().contains("did you mean tcp?"), transport.getMessage());
        final var nullTransport = assertThrows(BusConfigurationException.class,
            () -> resolve(new ConfigSources().code(BusConfig.TRANSPORT, null)));
        assertEquals("Bad value null for rdmabus.transport (from code): expected a transport name or auto", nullTransport.getMessage());
        final var seeds = assertThrows(BusConfigurationException.class,
            () -> resolve(new ConfigSources().environment(Map.of("RDMABUS_SEEDS", "10.0.0.1:7701"), Map.of())));
        assertTrue(seeds.getMessage().contains("for rdmabus.seeds (from env:RDMABUS_SEEDS): expected transport=host:port"), seeds.getMessage());
    }

    @Test
    void theFactorysOwnRefusalIsExtendedWithTheSourcesOfTheKeysItNames() {
        final BusConfig config = resolve(new ConfigSources().code(BusConfig.TRANSPORT, "tcp")
            .environment(Map.of("TCP_IO_THREADS", "2"), Map.of()));
        final var ex = assertThrows(BusConfigurationException.class, config::createTransport);
        assertTrue(ex.getMessage().endsWith("[tcp.io.threads from env:TCP_IO_THREADS]"), ex.getMessage());
    }

    @Test
    void aMissingFileFailsNamingWhatNamedIt() {
        final Path missing = dir.resolve("nope.properties");
        final var env = assertThrows(BusConfigurationException.class,
            () -> resolve(new ConfigSources().environment(Map.of(BusConfig.CONFIG_FILE_ENV, missing.toString()), Map.of())));
        assertTrue(env.getMessage().contains(missing.toAbsolutePath() + " (named by env:RDMABUS_CONFIG_FILE) does not exist"), env.getMessage());
        final var code = assertThrows(BusConfigurationException.class, () -> resolve(new ConfigSources().file(missing)));
        assertTrue(code.getMessage().contains("(named by code) does not exist"), code.getMessage());
    }

    @Test
    void sharedNamespacesAreNotErrorsButListedAndOtherTransportsKeysAreUnused() throws IOException {
        final Path f = file("rdmabus.transport=tcp", "aeron.mtu=4096");
        final BusConfig config = resolve(new ConfigSources().file(f)
            .environment(Map.of("AERON_THREADING_MODE", "SHARED", "RDMABUS_JVM_FLAGS", "-Xmx1g", "PATH", "/bin"),
                Map.of("aeron.term.buffer.length", "65536", "java.version", "25")));
        assertEquals(List.of("env:AERON_THREADING_MODE", "env:RDMABUS_JVM_FLAGS", "sysprop:aeron.term.buffer.length"), config.ignored());
        assertEquals(1, config.unused().size(), config.unused().toString());
        assertEquals("aeron.mtu", config.unused().getFirst().key());
        assertEquals("for transport aeron-udp", config.unused().getFirst().description());
    }

    @Test
    void seedsFromOutsideReplaceTheDiscoveryAndSecretsAreMasked() {
        final BusConfig config = resolve(new ConfigSources().code(BusConfig.TRANSPORT, "tcp").code(BusConfig.SEEDS, "")
            .environment(Map.of("RDMABUS_SEEDS", "tcp=10.0.0.1:7701, tcp=10.0.0.2:7701", "TCP_SECRET", "0123456789abcdef"), Map.of()));
        assertEquals(Map.of("tcp", List.of("10.0.0.1:7701", "10.0.0.2:7701")), config.seeds());
        assertEquals("****", config.value("tcp.secret").shown());
        assertEquals("0123456789abcdef", config.transportProperties().get("tcp.secret"));
    }

    @Test
    void envNamesAreDerivedMechanically() {
        assertEquals("RDMABUS_IDLE_STRATEGY", BusConfig.envName(BusConfig.IDLE_STRATEGY));
        assertEquals("RDMA_RETENTION_FRAMES", BusConfig.envName("rdma.retention.frames"));
    }
}
