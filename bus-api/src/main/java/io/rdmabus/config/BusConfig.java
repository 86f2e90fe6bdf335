package io.rdmabus.config;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;

import io.rdmabus.BusConfigurationException;
import io.rdmabus.IdleStrategies;
import io.rdmabus.spi.PropertyDescriptor;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportFactory;

/**
 * The effective configuration of one bus: every bus setting and every property of the chosen transport, each with the
 * source it came from. Made by {@link #resolve} from {@link ConfigSources}; immutable.
 *
 * <p>Keys: the bus's own under {@code rdmabus.} ({@link #NAME}, {@link #TRANSPORT}, {@link #IDLE_STRATEGY},
 * {@link #SEEDS}); a transport's under its {@link TransportFactory#propertyPrefix()} ({@code rdma.}, {@code tcp.},
 * {@code aeron.}). An environment variable's name is the key upper-cased with {@code .} and {@code -} turned into
 * {@code _} ({@code rdmabus.idle-strategy} = {@code RDMABUS_IDLE_STRATEGY}, {@code rdma.retention.frames} =
 * {@code RDMA_RETENTION_FRAMES}).
 *
 * <p>Precedence, highest first: command line, system property, environment, file, code, default (why: {@code README.md},
 * "Configuration"). A file, code and the command line are checked strictly: an unknown key fails, with a suggestion.
 * System properties under {@code rdmabus.} are too; the environment and other system properties are shared with other
 * tools (Aeron reads {@code aeron.*} and {@code AERON_DIR} itself, the launcher {@code RDMABUS_JVM_FLAGS}), so names there
 * that match no key are not errors: {@link #ignored()} lists those under a known prefix, and {@code rdma-bus config} prints
 * them. A value is checked against its key's {@link PropertyDescriptor}; every error names the key, its source and what
 * is allowed.
 */
public final class BusConfig {
    /** The bus's name, used in thread names and logs; default {@code bus-} and a random hex number. */
    public static final String NAME = "rdmabus.name";
    /** A transport factory's name or {@code auto}; default {@code auto}. */
    public static final String TRANSPORT = "rdmabus.transport";
    /** The agents' idle strategy; default {@code backoff}. */
    public static final String IDLE_STRATEGY = "rdmabus.idle-strategy";
    /** Which threads run the bus's agents ({@link io.rdmabus.ThreadingMode}); default {@code shared}. */
    public static final String THREADING_MODE = "rdmabus.threading-mode";
    /** Static seeds, {@code transport=host:port} separated by commas; default none. */
    public static final String SEEDS = "rdmabus.seeds";
    /** Key: where the bus's counters file goes, or {@code off} (io.rdmabus.counters.BusCounters). */
    public static final String COUNTERS_DIR = "rdmabus.counters.dir";
    /** System property naming a properties file to read. */
    public static final String CONFIG_FILE = "rdmabus.config.file";
    /** Environment variable naming a properties file to read (below the system property). */
    public static final String CONFIG_FILE_ENV = "RDMABUS_CONFIG_FILE";
    /** The prefix of the bus's own keys. */
    public static final String BUS_PREFIX = "rdmabus.";

    private static final Map<String, PropertyDescriptor> BUS_KEYS = describeBusKeys();

    private final String name;
    private final String transportName;
    private final TransportFactory factory;
    private final String idleStrategy;
    private final io.rdmabus.ThreadingMode threadingMode;
    private final Map<String, List<String>> seeds;
    private final String countersDir;
    private final Map<String, String> transportProperties;
    private final Map<String, ConfigValue> setTransportValues;
    private final List<ConfigValue> values;
    private final List<ConfigValue> unused;
    private final List<String> ignored;

    private BusConfig(final Resolution r) {
        this.name = r.name;
        this.transportName = r.transportName;
        this.factory = r.factory;
        this.idleStrategy = r.idleStrategy;
        this.threadingMode = r.threadingMode;
        this.seeds = r.seeds;
        this.countersDir = r.countersDir;
        this.transportProperties = Map.copyOf(r.transportProperties);
        this.setTransportValues = Map.copyOf(r.setTransportValues);
        this.values = List.copyOf(r.values);
        this.unused = List.copyOf(r.unused);
        this.ignored = List.copyOf(r.ignored);
    }

    /**
     * @param sources   where settings come from
     * @param factories the transport factories on the class path
     * @param instance  a transport given in code ({@code BusBuilder.transport(Transport)}), or {@code null}
     * @return the effective configuration
     * @throws BusConfigurationException for an unknown key, a bad value, a missing file or an unusable transport, naming
     *     the key, its source and what is allowed
     */
    public static BusConfig resolve(final ConfigSources sources, final List<TransportFactory> factories, final Transport instance) {
        return new BusConfig(new Resolution(sources, factories, instance).run());
    }

    /** @return the bus's name */
    public String name() {
        return name;
    }

    /** @return the chosen transport's name ({@code auto} resolved) */
    public String transportName() {
        return transportName;
    }

    /** @return the chosen factory, or {@code null} when code gave a transport instance */
    public TransportFactory factory() {
        return factory;
    }

    /** @return the idle strategy's name */
    public String idleStrategy() {
        return idleStrategy;
    }

    /** @return the threading mode */
    public io.rdmabus.ThreadingMode threadingMode() {
        return threadingMode;
    }

    /** @return the counters directory as set ({@code off} for none), or {@code null}: the default */
    public String countersDir() {
        return countersDir;
    }

    /** @return seeds set outside code, or {@code null}: keep the discovery given in code */
    public Map<String, List<String>> seeds() {
        return seeds;
    }

    /** @return the properties for {@link TransportFactory#create}: the set ones, under the factory's own keys */
    public Map<String, String> transportProperties() {
        return transportProperties;
    }

    /** @return every effective value, bus keys first, then the chosen transport's */
    public List<ConfigValue> values() {
        return values;
    }

    /** @return values set for another transport than the chosen one (a shared file may configure several) */
    public List<ConfigValue> unused() {
        return unused;
    }

    /** @return environment variables and system properties under a known prefix that match no key (not errors) */
    public List<String> ignored() {
        return ignored;
    }

    /**
     * @param key a configuration key
     * @return its effective value, or {@code null} if it is not a key of the bus or the chosen transport
     */
    public ConfigValue value(final String key) {
        return values.stream().filter(v -> v.key().equals(key)).findFirst().orElse(null);
    }

    /**
     * Creates the chosen transport; an error from the factory is extended with the source of every set key it names.
     *
     * @return a new, unstarted transport
     * @throws BusConfigurationException if the factory refuses the properties
     */
    public Transport createTransport() {
        if (factory == null) {
            throw new IllegalStateException("the transport was given in code");
        }
        try {
            return factory.create(transportProperties);
        } catch (final BusConfigurationException ex) {
            final StringBuilder where = new StringBuilder();
            setTransportValues.forEach((internal, v) -> {
                if (ex.getMessage() != null && (ex.getMessage().contains(internal) || ex.getMessage().contains(v.key()))) {
                    where.append(where.isEmpty() ? " [" : ", ").append(v.key()).append(" from ").append(v.source());
                }
            });
            if (where.isEmpty()) {
                throw ex;
            }
            final BusConfigurationException extended = new BusConfigurationException(ex.getMessage() + where + "]");
            extended.initCause(ex);
            throw extended;
        }
    }

    /**
     * @param key a configuration key
     * @return its environment variable name: upper case, {@code .} and {@code -} as {@code _}
     */
    public static String envName(final String key) {
        return key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    /** @return the bus's own keys with their descriptions */
    public static Map<String, PropertyDescriptor> busKeys() {
        return BUS_KEYS;
    }

    private static Map<String, PropertyDescriptor> describeBusKeys() {
        final Map<String, PropertyDescriptor> m = new LinkedHashMap<>();
        m.put(NAME, PropertyDescriptor.text(NAME, "bus-<random hex>", "the bus's name, in thread names and logs"));
        m.put(TRANSPORT, PropertyDescriptor.text(TRANSPORT, "auto", "transport factory name, or auto for the best available one"));
        m.put(IDLE_STRATEGY, PropertyDescriptor.choice(IDLE_STRATEGY, "backoff", "idle strategy of the bus's and the transport's agents",
            IdleStrategies.NAMES.split(", ")));
        m.put(THREADING_MODE, PropertyDescriptor.choice(THREADING_MODE, "shared",
            "which threads run the bus's agents: shared (one thread), dedicated (one per agent), invoker (Bus.doWork())",
            "shared", "dedicated", "invoker"));
        m.put(SEEDS, PropertyDescriptor.text(SEEDS, "", "static seeds: transport=host:port, comma-separated (e.g. tcp=10.0.0.2:7701)"));
        m.put(COUNTERS_DIR, PropertyDescriptor.text(COUNTERS_DIR, "/dev/shm/rdma-bus-<user>",
            "directory of the bus's counters file (rdma-bus stats), or off"));
        return java.util.Collections.unmodifiableMap(m);
    }

    /**
     * @param key     an unknown key
     * @param choices the known keys
     * @return {@code " (did you mean X?)"} for a close known key, else {@code ""}
     */
    static String suggestion(final String key, final Iterable<String> choices) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (final String choice : choices) {
            final int d = distance(key, choice);
            if (d < bestDistance) {
                best = choice;
                bestDistance = d;
            }
        }
        return best != null && bestDistance <= Math.max(2, key.length() / 4) ? " (did you mean " + best + "?)" : "";
    }

    private static int distance(final String a, final String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                final int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            final int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    /** One set value: its text and its source. */
    record Setting(String value, String source) {
    }

    /** The work of {@link #resolve}, in the order settings are looked at. */
    private static final class Resolution {
        private final List<TransportFactory> factories;
        private final Transport instance;
        /** Layers, lowest precedence first: code, files, environment, system properties, command line. */
        private final List<Map<String, Setting>> layers = new ArrayList<>();
        private final ConfigSources sources;

        private String name;
        private String transportName;
        private TransportFactory factory;
        private String idleStrategy;
        private io.rdmabus.ThreadingMode threadingMode;
        private Map<String, List<String>> seeds;
        private String countersDir;
        private final Map<String, String> transportProperties = new LinkedHashMap<>();
        private final Map<String, ConfigValue> setTransportValues = new LinkedHashMap<>();
        private final List<ConfigValue> values = new ArrayList<>();
        private final List<ConfigValue> unused = new ArrayList<>();
        private final List<String> ignored = new ArrayList<>();

        Resolution(final ConfigSources sources, final List<TransportFactory> factories, final Transport instance) {
            this.sources = sources;
            this.factories = List.copyOf(factories);
            this.instance = instance;
        }

        Resolution run() {
            layers.add(layer(sources.code, ConfigValue.CODE));
            for (final var file : ConfigFiles.named(sources)) {
                layers.add(ConfigFiles.load(file.getKey(), file.getValue()));
            }
            layers.add(environmentLayer());
            layers.add(systemPropertyLayer());
            layers.add(layer(sources.commandLine, ConfigValue.COMMAND_LINE));
            resolveBusKeys();
            resolveTransportKeys();
            return this;
        }

        private static Map<String, Setting> layer(final Map<String, String> settings, final String source) {
            final Map<String, Setting> m = new LinkedHashMap<>();
            settings.forEach((k, v) -> m.put(k, new Setting(v, source)));
            return m;
        }

        /** Environment variables by the known keys' names; the others under a known prefix are listed as ignored. */
        private Map<String, Setting> environmentLayer() {
            final Map<String, Setting> m = new LinkedHashMap<>();
            if (sources.environment == null) {
                return m;
            }
            final Map<String, String> byEnvName = new LinkedHashMap<>();
            for (final String key : allKeys()) {
                byEnvName.put(envName(key), key);
            }
            final TreeSet<String> prefixes = new TreeSet<>();
            prefixes.add(envName(BUS_PREFIX));
            factories.forEach(f -> prefixes.add(envName(f.propertyPrefix())));
            for (final var e : new java.util.TreeMap<>(sources.environment).entrySet()) {
                final String key = byEnvName.get(e.getKey());
                if (key != null) {
                    m.put(key, new Setting(e.getValue(), "env:" + e.getKey()));
                } else if (!e.getKey().equals(CONFIG_FILE_ENV) && prefixes.stream().anyMatch(e.getKey()::startsWith)) {
                    ignored.add("env:" + e.getKey());
                }
            }
            return m;
        }

        /** System properties under a known prefix; unknown ones under {@code rdmabus.} fail, others are listed as ignored. */
        private Map<String, Setting> systemPropertyLayer() {
            final Map<String, Setting> m = new LinkedHashMap<>();
            if (sources.systemProperties == null) {
                return m;
            }
            final List<String> known = allKeys();
            for (final var e : new java.util.TreeMap<>(sources.systemProperties).entrySet()) {
                final String key = e.getKey();
                if (known.contains(key)) {
                    m.put(key, new Setting(e.getValue(), "sysprop:" + key));
                } else if (key.startsWith(BUS_PREFIX) && !key.equals(CONFIG_FILE)) {
                    throw unknown(key, "sysprop:" + key, BUS_KEYS.keySet(), "bus");
                } else if (factories.stream().anyMatch(f -> key.startsWith(f.propertyPrefix()))) {
                    ignored.add("sysprop:" + key);
                }
            }
            return m;
        }

        /** @return every key of the bus and of every factory that declares its properties */
        private List<String> allKeys() {
            final List<String> keys = new ArrayList<>(BUS_KEYS.keySet());
            for (final TransportFactory f : factories) {
                f.properties().keySet().forEach(k -> {
                    final String ext = external(f, k);
                    if (!keys.contains(ext)) {
                        keys.add(ext);
                    }
                });
            }
            return keys;
        }

        private Setting highest(final String key) {
            for (int i = layers.size() - 1; i >= 0; i--) {
                final Setting s = layers.get(i).get(key);
                if (s != null) {
                    return s;
                }
            }
            return null;
        }

        private void resolveBusKeys() {
            for (final Map<String, Setting> layer : layers) {
                layer.forEach((key, s) -> {
                    if (key.startsWith(BUS_PREFIX) && !BUS_KEYS.containsKey(key)) {
                        throw unknown(key, s.source(), BUS_KEYS.keySet(), "bus");
                    }
                });
            }
            final Setting nameSetting = highest(NAME);
            name = nameSetting == null ? "bus-" + Integer.toHexString(ThreadLocalRandom.current().nextInt()) : nameSetting.value();
            if (name == null || name.isBlank()) {
                throw bad(NAME, name, nameSetting, "expected a non-blank name");
            }
            busValue(NAME, name, nameSetting);
            final Setting idleSetting = highest(IDLE_STRATEGY);
            idleStrategy = idleSetting == null ? "backoff" : idleSetting.value() == null ? "" : idleSetting.value().trim().toLowerCase(Locale.ROOT);
            final String idleProblem = BUS_KEYS.get(IDLE_STRATEGY).check(idleStrategy);
            if (idleProblem != null) {
                throw bad(IDLE_STRATEGY, idleStrategy, idleSetting, idleProblem);
            }
            final Setting modeSetting = highest(THREADING_MODE);
            final String mode = modeSetting == null ? "shared" : modeSetting.value() == null ? "" : modeSetting.value().trim().toLowerCase(Locale.ROOT);
            final String modeProblem = BUS_KEYS.get(THREADING_MODE).check(mode);
            if (modeProblem != null) {
                throw bad(THREADING_MODE, mode, modeSetting, modeProblem);
            }
            threadingMode = io.rdmabus.ThreadingMode.valueOf(mode.toUpperCase(Locale.ROOT));
            chooseTransport();
            busValue(IDLE_STRATEGY, idleStrategy, idleSetting);
            busValue(THREADING_MODE, mode, modeSetting);
            final Setting seedSetting = highest(SEEDS);
            if (seedSetting != null && !ConfigValue.CODE.equals(seedSetting.source())) {
                seeds = parseSeeds(seedSetting);
            }
            busValue(SEEDS, seedSetting == null ? "" : seedSetting.value(), seedSetting);
            final Setting countersSetting = highest(COUNTERS_DIR);
            countersDir = countersSetting == null || countersSetting.value() == null || countersSetting.value().isBlank() ? null
                : countersSetting.value().trim();
            busValue(COUNTERS_DIR, countersDir == null ? io.rdmabus.counters.BusCounters.directory(null).toString() : countersDir, countersSetting);
        }

        private void busValue(final String key, final String value, final Setting setting) {
            values.add(new ConfigValue(key, value, setting == null ? ConfigValue.DEFAULT : setting.source(), BUS_KEYS.get(key).description(),
                false));
        }

        private void chooseTransport() {
            final Setting setting = highest(TRANSPORT);
            if (setting != null && setting.value() == null) {
                throw bad(TRANSPORT, null, setting, "expected a transport name or auto");
            }
            final String wanted = setting == null ? "auto" : setting.value().trim();
            if (instance != null) {
                if (setting != null && !ConfigValue.CODE.equals(setting.source()) && !wanted.equals(instance.name())) {
                    throw new BusConfigurationException(TRANSPORT + "='" + wanted + "' (from " + setting.source()
                        + ") cannot replace the transport instance given in code ('" + instance.name() + "'): remove one of them");
                }
                transportName = instance.name();
                values.add(new ConfigValue(TRANSPORT, transportName, ConfigValue.CODE, BUS_KEYS.get(TRANSPORT).description(), false));
                return;
            }
            final StringBuilder reasons = new StringBuilder();
            final List<TransportFactory> sorted = new ArrayList<>(factories);
            sorted.sort(java.util.Comparator.comparingInt(TransportFactory::priority).reversed());
            if (sorted.isEmpty()) {
                throw new BusConfigurationException("No transport on the class path: add io.rdmabus:tcp-fallback (Aeron, TCP) or "
                    + "io.rdmabus:rdma-transport as a dependency");
            }
            for (final TransportFactory f : sorted) {
                if (!"auto".equals(wanted) && !f.name().equals(wanted)) {
                    continue;
                }
                final String unavailable = f.unavailableReason();
                if (unavailable == null) {
                    factory = f;
                    transportName = f.name();
                    final String why = "auto".equals(wanted) ? "auto picked it" + (reasons.isEmpty() ? "" : " (" + reasons + ")")
                        : BUS_KEYS.get(TRANSPORT).description();
                    values.add(new ConfigValue(TRANSPORT, f.name(), setting == null ? ConfigValue.DEFAULT : setting.source(), why, false));
                    return;
                }
                reasons.append(reasons.isEmpty() ? "" : "; ").append(f.name()).append(": ").append(unavailable);
            }
            final String from = setting == null ? "" : " (" + TRANSPORT + " from " + setting.source() + ")";
            final List<String> names = sorted.stream().map(TransportFactory::name).toList();
            if (reasons.isEmpty()) {
                throw new BusConfigurationException("Unknown transport '" + wanted + "'" + from + ": available are " + names + " or 'auto'"
                    + suggestion(wanted, names));
            }
            throw new BusConfigurationException("No usable transport for '" + wanted + "'" + from + ": " + reasons + "; pick another of "
                + names);
        }

        private Map<String, List<String>> parseSeeds(final Setting setting) {
            final Map<String, List<String>> m = new LinkedHashMap<>();
            final String text = setting.value() == null ? "" : setting.value().trim();
            if (text.isEmpty()) {
                return m;
            }
            for (final String part : text.split(",")) {
                final String seed = part.trim();
                final int eq = seed.indexOf('=');
                if (eq <= 0 || eq == seed.length() - 1) {
                    throw bad(SEEDS, text, setting, "expected transport=host:port, comma-separated, e.g. tcp=10.0.0.2:7701,tcp=10.0.0.3:7701");
                }
                m.computeIfAbsent(seed.substring(0, eq).trim(), k -> new ArrayList<>()).add(seed.substring(eq + 1).trim());
            }
            return m;
        }

        private void resolveTransportKeys() {
            final Map<String, String> internalByExternal = new LinkedHashMap<>();
            if (factory != null) {
                factory.properties().keySet().forEach(k -> internalByExternal.put(external(factory, k), k));
            }
            final Map<String, Setting> chosen = new LinkedHashMap<>();
            for (final Map<String, Setting> layer : layers) {
                final boolean fromCode = layer == layers.getFirst() || layer == layers.getLast();
                for (final var e : layer.entrySet()) {
                    if (e.getKey().startsWith(BUS_PREFIX)) {
                        continue;
                    }
                    final String internal = fromCode ? codeKey(e.getKey(), e.getValue(), internalByExternal)
                        : outsideKey(e.getKey(), e.getValue(), internalByExternal);
                    if (internal != null) {
                        chosen.put(internal, e.getValue());
                    }
                }
            }
            if (factory == null) {
                return;
            }
            final Map<String, PropertyDescriptor> declared = factory.properties();
            chosen.forEach((internal, s) -> {
                final PropertyDescriptor d = declared.get(internal);
                final String ext = external(factory, internal);
                if (s.value() == null) {
                    throw bad(ext, null, s, "expected " + (d == null ? "a value" : d.allowed()));
                }
                if (d != null && d.check(s.value()) != null) {
                    throw bad(ext, s.value(), s, d.check(s.value()));
                }
                transportProperties.put(internal, s.value());
                setTransportValues.put(internal, new ConfigValue(ext, s.value(), s.source(), d == null ? "" : d.description(),
                    d != null && d.secret()));
            });
            for (final PropertyDescriptor d : declared.values()) {
                final ConfigValue set = setTransportValues.get(d.key());
                values.add(set != null ? set
                    : new ConfigValue(external(factory, d.key()), d.defaultValue(), ConfigValue.DEFAULT, d.description(), d.secret()));
            }
            if (declared.isEmpty()) {
                values.addAll(setTransportValues.values());
            }
        }

        /** A transport key from code or the command line: the chosen factory's (either form) or an error. */
        private String codeKey(final String key, final Setting s, final Map<String, String> internalByExternal) {
            if (factory == null) {
                unused.add(new ConfigValue(key, s.value(), s.source(), "ignored: the transport instance given in code has its own settings",
                    false));
                return null;
            }
            if (factory.properties().isEmpty()) {
                return key;
            }
            final String internal = internalByExternal.get(external(factory, key));
            if (internal == null) {
                for (final TransportFactory other : factories) {
                    if (other != factory && other.properties().containsKey(key)) {
                        throw new BusConfigurationException("Key '" + key + "' (from " + s.source() + ") applies to " + other.name()
                            + " only, not " + factory.name() + ": remove it or choose " + other.name());
                    }
                }
                throw unknown(key, s.source(), internalByExternal.keySet(), factory.name());
            }
            return internal;
        }

        /** A transport key from a file, the environment or a system property. */
        private String outsideKey(final String key, final Setting s, final Map<String, String> internalByExternal) {
            if (factory != null && key.startsWith(factory.propertyPrefix())) {
                if (factory.properties().isEmpty()) {
                    return key;
                }
                final String internal = internalByExternal.get(key);
                if (internal != null) {
                    return internal;
                }
            }
            for (final TransportFactory other : factories) {
                if (other != factory && key.startsWith(other.propertyPrefix())
                    && (other.properties().isEmpty() || other.properties().keySet().stream().anyMatch(k -> external(other, k).equals(key)))) {
                    unused.add(new ConfigValue(key, s.value(), s.source(), "for transport " + other.name(),
                        other.properties().values().stream().anyMatch(d -> d.secret() && external(other, d.key()).equals(key))));
                    return null;
                }
            }
            throw unknownOutside(key, s.source());
        }

        private BusConfigurationException unknown(final String key, final String source, final java.util.Collection<String> known,
                                                  final String family) {
            return new BusConfigurationException("Unknown " + family + " key '" + key + "' (from " + source + ")" + suggestion(key, known)
                + ": known are " + known);
        }

        /** An unknown key from a file: listed against the keys of the transports its prefix names, else against every key. */
        private BusConfigurationException unknownOutside(final String key, final String source) {
            final List<String> sameFamily = new ArrayList<>();
            final List<String> names = new ArrayList<>();
            for (final TransportFactory f : factories) {
                if (key.startsWith(f.propertyPrefix())) {
                    names.add(f.name());
                    f.properties().keySet().stream().map(k -> external(f, k)).filter(k -> !sameFamily.contains(k)).forEach(sameFamily::add);
                }
            }
            if (!sameFamily.isEmpty()) {
                return unknown(key, source, sameFamily, String.join("/", names));
            }
            final List<String> prefixes = new ArrayList<>(List.of(BUS_PREFIX));
            factories.stream().map(TransportFactory::propertyPrefix).filter(p -> !prefixes.contains(p)).forEach(prefixes::add);
            return new BusConfigurationException("Unknown key '" + key + "' (from " + source + ")" + suggestion(key, allKeys())
                + ": keys start with one of " + prefixes + "; rdma-bus config -t TRANSPORT lists a transport's keys");
        }
    }

    static String external(final TransportFactory f, final String key) {
        return key.startsWith(f.propertyPrefix()) ? key : f.propertyPrefix() + key;
    }

    static BusConfigurationException bad(final String key, final String value, final Setting setting, final String problem) {
        return new BusConfigurationException("Bad value " + (value == null ? "null" : "'" + value + "'") + " for " + key + " (from "
            + (setting == null ? ConfigValue.DEFAULT : setting.source()) + "): " + problem);
    }

    @Override
    public String toString() {
        return "BusConfig" + Arrays.toString(values.stream().map(v -> v.key() + "=" + v.shown() + " (" + v.source() + ")").toArray());
    }
}
