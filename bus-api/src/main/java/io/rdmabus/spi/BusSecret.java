package io.rdmabus.spi;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.rdmabus.BusConfigurationException;

/**
 * The bus secret a transport authenticates its peers with, parsed from the transport's properties under a prefix
 * ({@code rdma}, {@code tcp}): {@code <prefix>.secret} and {@code <prefix>.secret.file}.
 *
 * <ul>
 *   <li>{@code <prefix>.secret=<at least 16 bytes>} or {@code <prefix>.secret.file=<path>} (the file's bytes, one
 *   trailing newline dropped; preferred: properties end up in logs and process listings): every peer must prove it
 *   knows the same secret before anything else is exchanged.</li>
 *   <li>{@code <prefix>.secret=none}: explicitly no authentication (a lab, a closed network), no warning.</li>
 *   <li>neither set: no authentication, and the transport warns at start saying how to set a secret.</li>
 * </ul>
 * Setting both keys, a secret shorter than {@value #MIN_SECRET_BYTES} bytes or an unreadable file fails with a
 * {@link BusConfigurationException} naming the key. Immutable; the secret's bytes are never logged ({@link #toString()}
 * says only their count).
 */
public final class BusSecret {
    /** The least number of bytes a secret must have. */
    public static final int MIN_SECRET_BYTES = 16;
    /** The value of {@code <prefix>.secret} that turns authentication off explicitly. */
    public static final String NONE = "none";
    private static final String HMAC = "HmacSHA256";

    private final String secretKey;
    private final String secretFileKey;
    private final byte[] key;
    private final boolean explicitlyNone;

    private BusSecret(final String prefix, final byte[] key, final boolean explicitlyNone) {
        this.secretKey = secretKey(prefix);
        this.secretFileKey = secretFileKey(prefix);
        this.key = key;
        this.explicitlyNone = explicitlyNone;
    }

    /**
     * @param prefix the transport's property prefix, e.g. {@code "tcp"}
     * @return {@code <prefix>.secret}
     */
    public static String secretKey(final String prefix) {
        return prefix + ".secret";
    }

    /**
     * @param prefix the transport's property prefix, e.g. {@code "tcp"}
     * @return {@code <prefix>.secret.file}
     */
    public static String secretFileKey(final String prefix) {
        return prefix + ".secret.file";
    }

    /**
     * @param prefix the transport's property prefix, e.g. {@code "tcp"}
     * @return the two keys this class reads, for a transport's list of known keys
     */
    public static List<String> keys(final String prefix) {
        return List.of(secretKey(prefix), secretFileKey(prefix));
    }

    /**
     * @param prefix     the transport's property prefix, e.g. {@code "tcp"}
     * @param properties the transport's properties (other keys are ignored)
     * @return the secret, explicitly none, or unset
     * @throws BusConfigurationException if both keys are set, the file cannot be read or the secret is too short
     */
    public static BusSecret parse(final String prefix, final Map<String, String> properties) {
        final String secretKey = secretKey(prefix);
        final String fileKey = secretFileKey(prefix);
        final String secret = properties.get(secretKey);
        final String file = properties.get(fileKey);
        final boolean hasSecret = secret != null && !secret.isEmpty();
        final boolean hasFile = file != null && !file.isBlank();
        if (hasSecret && hasFile) {
            throw new BusConfigurationException("Set only one of " + secretKey + " and " + fileKey);
        }
        if (hasSecret && secret.equals(NONE)) {
            return new BusSecret(prefix, null, true);
        }
        byte[] key;
        final String from;
        if (hasSecret) {
            key = secret.getBytes(StandardCharsets.UTF_8);
            from = secretKey;
        } else if (hasFile) {
            final String path = file.trim();
            try {
                key = Files.readAllBytes(Path.of(path));
            } catch (final IOException | RuntimeException e) {
                throw new BusConfigurationException("Cannot read the bus secret from " + fileKey + "='" + path + "': " + e);
            }
            if (key.length > 0 && key[key.length - 1] == '\n') {
                key = Arrays.copyOf(key, key.length - 1);
            }
            from = fileKey + " '" + path + "'";
        } else {
            return new BusSecret(prefix, null, false);
        }
        if (key.length < MIN_SECRET_BYTES) {
            throw new BusConfigurationException("The bus secret from " + from + " has " + key.length + " bytes: use at least "
                + MIN_SECRET_BYTES + " (e.g. 32 random bytes, base64), or " + secretKey + "=" + NONE + " to run without authentication");
        }
        return new BusSecret(prefix, key, false);
    }

    /** @return true if peers must authenticate */
    public boolean enabled() {
        return key != null;
    }

    /** @return true if neither key was set (the transport warns at start) */
    public boolean unset() {
        return key == null && !explicitlyNone;
    }

    /** @return {@code <prefix>.secret}, for messages */
    public String secretKey() {
        return secretKey;
    }

    /** @return {@code <prefix>.secret.file}, for messages */
    public String secretFileKey() {
        return secretFileKey;
    }

    /**
     * @return a copy of the secret's bytes (never log them)
     * @throws IllegalStateException if no secret is set
     */
    public byte[] key() {
        if (key == null) {
            throw new IllegalStateException("no bus secret is set (" + this + ")");
        }
        return key.clone();
    }

    /**
     * HMAC-SHA256 keyed with the secret over the concatenation of {@code parts} (control path: allocates).
     *
     * @param parts what to authenticate, in order
     * @return the 32-byte MAC
     * @throws IllegalStateException if no secret is set
     */
    public byte[] hmac(final byte[]... parts) {
        if (key == null) {
            throw new IllegalStateException("no bus secret is set (" + this + ")");
        }
        try {
            final Mac mac = Mac.getInstance(HMAC);
            mac.init(new SecretKeySpec(key, HMAC));
            for (final byte[] part : parts) {
                mac.update(part);
            }
            return mac.doFinal();
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException(HMAC + " unavailable", e);
        }
    }

    /**
     * Constant-time comparison of two MACs.
     *
     * @param expected what this node computed
     * @param actual   what the peer sent
     * @return true if both are present and equal
     */
    public static boolean matches(final byte[] expected, final byte[] actual) {
        return expected != null && actual != null && MessageDigest.isEqual(expected, actual);
    }

    @Override
    public String toString() {
        return key != null ? "secret(" + key.length + " bytes)" : explicitlyNone ? NONE : "unset";
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof BusSecret s && Arrays.equals(key, s.key) && explicitlyNone == s.explicitlyNone
            && secretKey.equals(s.secretKey);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(key) * 31 + secretKey.hashCode();
    }
}
