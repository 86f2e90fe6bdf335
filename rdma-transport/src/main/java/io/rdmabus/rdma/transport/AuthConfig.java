package io.rdmabus.rdma.transport;

import io.rdmabus.BusConfigurationException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The bus secret that authenticates RC peers ({@code rdma.secret} or {@code rdma.secret.file}; see
 * {@code docs/rdma-transport.md}, "Security").
 *
 * <ul>
 *   <li>{@code rdma.secret=<at least 16 bytes>} or {@code rdma.secret.file=<path>} (the file's bytes, a trailing
 *   newline dropped; preferred: properties end up in logs and process listings): every peer must prove it knows the
 *   same secret (HMAC-SHA256 challenge-response at connect) before any credit, subscription or frame is exchanged.</li>
 *   <li>{@code rdma.secret=none}: explicitly no authentication (a lab or a closed fabric), no warning.</li>
 *   <li>neither set: no authentication, and the transport logs a warning at start saying how to set a secret.</li>
 * </ul>
 * A node with a secret refuses peers without one, and a node without one cannot join a bus that has one.
 */
final class AuthConfig {
    /** The bus secret as a string (UTF-8 bytes), or {@code none}. */
    static final String SECRET = "rdma.secret";
    /** A file holding the bus secret (its bytes; one trailing newline is dropped). */
    static final String SECRET_FILE = "rdma.secret.file";
    static final int MIN_SECRET_BYTES = 16;

    private static final AuthConfig UNSET = new AuthConfig(null, false);
    private final byte[] key;
    private final boolean explicitlyNone;

    private AuthConfig(final byte[] key, final boolean explicitlyNone) {
        this.key = key;
        this.explicitlyNone = explicitlyNone;
    }

    static Map<String, String> defaults() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(SECRET, "");
        m.put(SECRET_FILE, "");
        return m;
    }

    /** @return the settings for {@code properties} (fails fast on an unreadable file or a short secret) */
    static AuthConfig parse(final Map<String, String> properties) {
        String secret = properties.get(SECRET);
        String file = properties.get(SECRET_FILE);
        boolean hasSecret = secret != null && !secret.isEmpty();
        boolean hasFile = file != null && !file.isBlank();
        if (hasSecret && hasFile) {
            throw new BusConfigurationException("Set only one of " + SECRET + " and " + SECRET_FILE);
        }
        if (hasSecret && secret.equals("none")) {
            return new AuthConfig(null, true);
        }
        byte[] key;
        String from;
        if (hasSecret) {
            key = secret.getBytes(StandardCharsets.UTF_8);
            from = SECRET;
        } else if (hasFile) {
            try {
                key = Files.readAllBytes(Path.of(file.trim()));
            } catch (IOException | RuntimeException e) {
                throw new BusConfigurationException("Cannot read the bus secret from " + SECRET_FILE + "='" + file.trim() + "': " + e);
            }
            if (key.length > 0 && key[key.length - 1] == '\n') {
                key = java.util.Arrays.copyOf(key, key.length - 1);
            }
            from = SECRET_FILE + " '" + file.trim() + "'";
        } else {
            return UNSET;
        }
        if (key.length < MIN_SECRET_BYTES) {
            throw new BusConfigurationException("The bus secret from " + from + " has " + key.length + " bytes: use at least "
                    + MIN_SECRET_BYTES + " (e.g. 32 random bytes, base64), or " + SECRET + "=none to run without authentication");
        }
        return new AuthConfig(key, false);
    }

    /** @return true if peers must authenticate */
    boolean enabled() {
        return key != null;
    }

    /** @return true if neither key was set (the transport warns at start) */
    boolean unset() {
        return key == null && !explicitlyNone;
    }

    /** @return the secret's bytes (a copy is not made: package-private, never logged) */
    byte[] key() {
        return key;
    }

    @Override
    public String toString() {
        return key != null ? "secret(" + key.length + " bytes)" : explicitlyNone ? "none" : "unset";
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof AuthConfig a && java.util.Arrays.equals(key, a.key) && explicitlyNone == a.explicitlyNone;
    }

    @Override
    public int hashCode() {
        return java.util.Arrays.hashCode(key);
    }
}
