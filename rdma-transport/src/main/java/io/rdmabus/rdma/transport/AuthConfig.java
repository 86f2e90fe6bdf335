package io.rdmabus.rdma.transport;

import io.rdmabus.spi.BusSecret;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The rdma transport's bus secret keys, {@code rdma.secret} and {@code rdma.secret.file} (see {@code docs/rdma-transport.md},
 * "Security"). They are parsed by bus-api's {@link BusSecret} under the prefix {@value #PREFIX}, with the same rules as
 * every transport's secret: at least {@value BusSecret#MIN_SECRET_BYTES} bytes, from the property or (preferred) the file
 * with one trailing newline dropped, {@code none} for explicitly no authentication, only one of the two keys, and a
 * {@link io.rdmabus.BusConfigurationException} naming the key otherwise. What the rdma transport does with it (the RC
 * connect handshake, the UD Q_Key, the adverts' MAC) is in {@link PeerAuth}, {@link UdConfig} and {@link Advert}.
 */
final class AuthConfig {
    /** The property prefix of the rdma transport's secret. */
    static final String PREFIX = "rdma";
    /** The bus secret as a string (UTF-8 bytes), or {@code none}. */
    static final String SECRET = "rdma.secret";
    /** A file holding the bus secret (its bytes; one trailing newline is dropped). */
    static final String SECRET_FILE = "rdma.secret.file";

    private AuthConfig() {
    }

    static Map<String, String> defaults() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(SECRET, "");
        m.put(SECRET_FILE, "");
        return m;
    }

    /**
     * @return the secret for {@code properties}
     * @throws io.rdmabus.BusConfigurationException on an unreadable file, a short secret or both keys set, naming the key
     */
    static BusSecret parse(final Map<String, String> properties) {
        return BusSecret.parse(PREFIX, properties);
    }

    /** @return a copy of the secret's bytes for the UD Q_Key and the adverts' MAC, or null without a secret (control path) */
    static byte[] keyOrNull(final BusSecret secret) {
        return secret.enabled() ? secret.key() : null;
    }
}
