package io.rdmabus.config;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Where a bus's settings come from, collected by {@link io.rdmabus.BusBuilder} and turned into a {@link BusConfig} by
 * {@link BusConfig#resolve}. Highest precedence first: command line, system properties, environment, files (a file named
 * from outside code above one named in code), code (builder calls), defaults. Owned by the thread that configures the
 * builder; not thread-safe.
 */
public final class ConfigSources {
    final Map<String, String> code = new LinkedHashMap<>();
    final Map<String, String> commandLine = new LinkedHashMap<>();
    final List<Path> files = new ArrayList<>();
    Map<String, String> environment;
    Map<String, String> systemProperties;

    /** Nothing but code and defaults until told otherwise. */
    public ConfigSources() {
    }

    /**
     * @param key   a bus key ({@code rdmabus.*}) or a transport property as the builder was given it
     * @param value the value set in code ({@code null} is kept and refused when resolved)
     * @return this
     */
    public ConfigSources code(final String key, final String value) {
        code.put(Objects.requireNonNull(key, "key"), value);
        return this;
    }

    /**
     * @param key   a bus key ({@code rdmabus.*}) or a transport property
     * @param value the value a command line flag gave; it beats every other source
     * @return this
     */
    public ConfigSources commandLine(final String key, final String value) {
        commandLine.put(Objects.requireNonNull(key, "key"), value);
        return this;
    }

    /** @param path a properties file (UTF-8) that must exist @return this */
    public ConfigSources file(final Path path) {
        files.add(Objects.requireNonNull(path, "path"));
        return this;
    }

    /**
     * Reads system properties and environment variables, and the file they name ({@value BusConfig#CONFIG_FILE} or
     * {@value BusConfig#CONFIG_FILE_ENV}).
     *
     * @param env   environment variables (the process's: {@link System#getenv()})
     * @param props system properties (the process's: {@link System#getProperties()})
     * @return this
     */
    public ConfigSources environment(final Map<String, String> env, final Map<String, String> props) {
        this.environment = Map.copyOf(env);
        this.systemProperties = Map.copyOf(props);
        return this;
    }

    /** @return this, reading the process's system properties and environment ({@link #environment(Map, Map)}) */
    public ConfigSources fromEnvironment() {
        final Map<String, String> props = new LinkedHashMap<>();
        System.getProperties().forEach((k, v) -> {
            if (k instanceof String key && v instanceof String value) {
                props.put(key, value);
            }
        });
        return environment(System.getenv(), props);
    }
}
