package io.rdmabus.spi;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One property a {@link TransportFactory} accepts: its key, default, a one-line description and what values are
 * allowed. {@link io.rdmabus.config.BusConfig} checks values against it before the factory parses them, so a bad value
 * fails naming the key, where it came from and what is allowed; the factory still checks what depends on several keys.
 *
 * @param key          the key as given to {@link TransportFactory#create(java.util.Map)}, e.g. {@code tcp.bind}
 * @param defaultValue the value used when none is set, as text ({@code ""} = none, or detected at start)
 * @param description  one line: what it does
 * @param type         how the value is checked
 * @param min          smallest value of an {@link Type#INTEGER}
 * @param max          largest value of an {@link Type#INTEGER}
 * @param choices      the values a {@link Type#CHOICE} accepts (compared ignoring case)
 */
public record PropertyDescriptor(String key, String defaultValue, String description, Type type, long min, long max, List<String> choices) {
    /** How a value is checked. */
    public enum Type {
        /** Any text (the factory checks its form). */
        TEXT,
        /** Any text, never printed: {@code rdma-bus config} shows it masked. */
        SECRET,
        /** A decimal integer in {@code min..max}. */
        INTEGER,
        /** {@code true} or {@code false}. */
        BOOLEAN,
        /** One of {@code choices}. */
        CHOICE
    }

    /** Copies the choices. */
    public PropertyDescriptor {
        choices = List.copyOf(choices);
    }

    /**
     * @param key what it is called @param defaultValue its default ("" = none) @param description one line
     * @return a free-text property
     */
    public static PropertyDescriptor text(final String key, final String defaultValue, final String description) {
        return new PropertyDescriptor(key, defaultValue, description, Type.TEXT, 0, 0, List.of());
    }

    /**
     * @param key what it is called @param description one line
     * @return a secret (default none, masked when printed)
     */
    public static PropertyDescriptor secret(final String key, final String description) {
        return new PropertyDescriptor(key, "", description, Type.SECRET, 0, 0, List.of());
    }

    /**
     * @param key what it is called @param defaultValue its default @param min smallest allowed @param max largest allowed
     * @param description one line
     * @return an integer property
     */
    public static PropertyDescriptor integer(final String key, final long defaultValue, final long min, final long max, final String description) {
        return new PropertyDescriptor(key, Long.toString(defaultValue), description, Type.INTEGER, min, max, List.of());
    }

    /**
     * @param key what it is called @param defaultValue its default @param description one line
     * @return a boolean property
     */
    public static PropertyDescriptor bool(final String key, final boolean defaultValue, final String description) {
        return new PropertyDescriptor(key, Boolean.toString(defaultValue), description, Type.BOOLEAN, 0, 0, List.of());
    }

    /**
     * @param key what it is called @param defaultValue its default @param description one line
     * @param choices the accepted values
     * @return an enumerated property
     */
    public static PropertyDescriptor choice(final String key, final String defaultValue, final String description, final String... choices) {
        return new PropertyDescriptor(key, defaultValue, description, Type.CHOICE, 0, 0, List.of(choices));
    }

    /**
     * What {@link TransportFactory#properties()} returns: the described properties, then every other known key as text
     * without a default (a key whose name contains {@code secret} as a secret), so a key added to a transport is accepted
     * before anyone describes it.
     *
     * @param knownKeys   every key the factory accepts
     * @param described   descriptions of (some of) them, in the order to list them; each must be a known key
     * @return descriptors by key
     * @throws IllegalArgumentException if a described key is not known
     */
    public static Map<String, PropertyDescriptor> declare(final Collection<String> knownKeys, final PropertyDescriptor... described) {
        final Map<String, PropertyDescriptor> m = new LinkedHashMap<>();
        for (final PropertyDescriptor d : described) {
            if (!knownKeys.contains(d.key())) {
                throw new IllegalArgumentException("described key " + d.key() + " is not among the known keys " + knownKeys);
            }
            m.put(d.key(), d);
        }
        for (final String key : knownKeys) {
            m.computeIfAbsent(key, k -> k.contains("secret") ? secret(k, "(not described)") : text(k, "", "(not described)"));
        }
        return Collections.unmodifiableMap(m);
    }

    /** @return true if the value must never be printed */
    public boolean secret() {
        return type == Type.SECRET;
    }

    /** @return what values are allowed, for error messages and help, e.g. {@code an integer 1..2} */
    public String allowed() {
        return switch (type) {
            case TEXT -> "text";
            case SECRET -> "a secret";
            case INTEGER -> "an integer " + min + ".." + max;
            case BOOLEAN -> "true or false";
            case CHOICE -> "one of " + String.join(", ", choices);
        };
    }

    /**
     * @param value a value given for this key
     * @return null if it is allowed, else what is wrong (without the key)
     */
    public String check(final String value) {
        final String v = value.trim();
        return switch (type) {
            case TEXT, SECRET -> null;
            case INTEGER -> {
                final Long n = parseInteger(v);
                yield n == null ? "not an integer, expected " + allowed() : n >= min && n <= max ? null : "out of range, expected " + allowed();
            }
            case BOOLEAN -> "true".equalsIgnoreCase(v) || "false".equalsIgnoreCase(v) ? null : "expected " + allowed();
            case CHOICE -> choices.contains(v.toLowerCase(Locale.ROOT)) ? null : "expected " + allowed();
        };
    }

    /** Decimal, or what {@link Long#decode} reads (hexadecimal {@code 0x..}), as the transports parse them. */
    private static Long parseInteger(final String v) {
        try {
            return Long.parseLong(v);
        } catch (final NumberFormatException ex) {
            try {
                return Long.decode(v);
            } catch (final NumberFormatException ex2) {
                return null;
            }
        }
    }
}
