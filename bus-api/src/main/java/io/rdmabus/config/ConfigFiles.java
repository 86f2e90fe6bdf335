package io.rdmabus.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.AbstractMap.SimpleEntry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import io.rdmabus.BusConfigurationException;

/** Finds and reads the properties files of a {@link ConfigSources}. */
final class ConfigFiles {
    private ConfigFiles() {
    }

    /**
     * @param sources the sources
     * @return the files to read, lowest precedence first, each with what named it: the files named in code, then the one a
     *     system property ({@value BusConfig#CONFIG_FILE}) or else the environment ({@value BusConfig#CONFIG_FILE_ENV}) names
     */
    static List<Map.Entry<Path, String>> named(final ConfigSources sources) {
        final List<Map.Entry<Path, String>> files = new ArrayList<>();
        sources.files.forEach(p -> files.add(new SimpleEntry<>(p, ConfigValue.CODE)));
        final String fromProperty = sources.systemProperties == null ? null : sources.systemProperties.get(BusConfig.CONFIG_FILE);
        final String fromEnv = sources.environment == null ? null : sources.environment.get(BusConfig.CONFIG_FILE_ENV);
        if (fromProperty != null && !fromProperty.isBlank()) {
            files.add(new SimpleEntry<>(Path.of(fromProperty.trim()), "sysprop:" + BusConfig.CONFIG_FILE));
        } else if (fromEnv != null && !fromEnv.isBlank()) {
            files.add(new SimpleEntry<>(Path.of(fromEnv.trim()), "env:" + BusConfig.CONFIG_FILE_ENV));
        }
        return files;
    }

    /**
     * @param file    a properties file (UTF-8)
     * @param namedBy what named it, for the error message
     * @return its settings, each with the source {@code file:PATH}
     * @throws BusConfigurationException if it cannot be read or names another file
     */
    static Map<String, BusConfig.Setting> load(final Path file, final String namedBy) {
        if (!Files.isRegularFile(file)) {
            throw new BusConfigurationException("Configuration file " + file.toAbsolutePath() + " (named by " + namedBy + ") "
                + (Files.exists(file) ? "is not a regular file" : "does not exist") + ": give the path of a readable properties file");
        }
        final Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(reader);
        } catch (final IOException | IllegalArgumentException ex) {
            throw new BusConfigurationException("Cannot read configuration file " + file.toAbsolutePath() + " (named by " + namedBy + "): " + ex);
        }
        final String source = "file:" + file;
        final Map<String, BusConfig.Setting> settings = new LinkedHashMap<>();
        new TreeMap<>(properties).forEach((k, v) -> {
            if (BusConfig.CONFIG_FILE.equals(k)) {
                throw new BusConfigurationException(BusConfig.CONFIG_FILE + " in " + source + ": a file cannot name another; set it as a "
                    + "system property or " + BusConfig.CONFIG_FILE_ENV + " in the environment");
            }
            settings.put((String) k, new BusConfig.Setting(((String) v).strip(), source));
        });
        return settings;
    }
}
