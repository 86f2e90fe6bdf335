package io.rdmabus.transport.tcp;

import java.io.File;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.util.Locale;
import java.util.Map;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.rdmabus.BusConfigurationException;

/**
 * Optional TLS on the TCP transport's connections ({@value #TLS}=true), with netty's {@link SslContext} (the JDK
 * provider): mutual TLS, every node presents {@value #CERT} / {@value #KEY} and accepts only peers whose certificate
 * chains to {@value #TRUST}, in both directions (the accepting node requires a client certificate). Host names are not
 * verified: nodes dial each other by address, and membership is "holds a certificate issued by the trusted CA".
 * Every file is read and both contexts are built when the properties are parsed, so a missing or bad file fails the
 * bus's build naming the key.
 */
public final class TcpTlsConfig {
    /** {@code true} or {@code false} (default): TLS on every connection. Every node must use the same value. */
    public static final String TLS = "tcp.tls";
    /** PEM file: this node's certificate (chain). Required with {@code tcp.tls=true}. */
    public static final String CERT = "tcp.tls.cert";
    /** PEM file: this node's private key, PKCS#8 unencrypted. Required with {@code tcp.tls=true}. */
    public static final String KEY = "tcp.tls.key";
    /** PEM file: the CA certificate(s) a peer's certificate must chain to. Required with {@code tcp.tls=true}. */
    public static final String TRUST = "tcp.tls.trust";

    /** TLS off. */
    public static final TcpTlsConfig OFF = new TcpTlsConfig(null, null, "off");

    private final SslContext server;
    private final SslContext client;
    private final String description;

    private TcpTlsConfig(final SslContext server, final SslContext client, final String description) {
        this.server = server;
        this.client = client;
        this.description = description;
    }

    /**
     * @param properties the transport's properties
     * @return TLS settings, {@link #OFF} unless {@code tcp.tls=true}
     * @throws BusConfigurationException naming the key of a bad value, a missing key or an unreadable file
     */
    static TcpTlsConfig from(final Map<String, String> properties) {
        final String flag = properties.getOrDefault(TLS, "false").trim().toLowerCase(Locale.ROOT);
        if (!flag.equals("true") && !flag.equals("false")) {
            throw new BusConfigurationException(TLS + "='" + properties.get(TLS) + "': use true or false");
        }
        if (flag.equals("false")) {
            for (final String key : new String[] {CERT, KEY, TRUST}) {
                if (properties.containsKey(key)) {
                    throw new BusConfigurationException(key + " is set but " + TLS + " is not true: set " + TLS + "=true to use it, or remove "
                        + key);
                }
            }
            return OFF;
        }
        final File cert = readableFile(properties, CERT, "this node's certificate");
        final File key = readableFile(properties, KEY, "this node's private key, PKCS#8");
        final File trust = readableFile(properties, TRUST, "the CA certificate that peers' certificates chain to");
        checkCertificates(CERT, cert);
        checkCertificates(TRUST, trust);
        try {
            final SslContext server = SslContextBuilder.forServer(cert, key).sslProvider(SslProvider.JDK).trustManager(trust)
                .clientAuth(ClientAuth.REQUIRE).build();
            final SslContext client = SslContextBuilder.forClient().sslProvider(SslProvider.JDK).keyManager(cert, key).trustManager(trust)
                .endpointIdentificationAlgorithm(null).build();
            return new TcpTlsConfig(server, client, "mutual TLS (" + CERT + "=" + cert + ", " + TRUST + "=" + trust + ")");
        } catch (final Exception ex) {
            // the certificates parsed above, so what is left to fail is the key or the pair
            throw new BusConfigurationException(KEY + "='" + key + "' with " + CERT + "='" + cert + "' cannot be used: " + ex.getMessage()
                + " (expected an unencrypted PKCS#8 PEM key, BEGIN PRIVATE KEY, matching the certificate)");
        }
    }

    private static File readableFile(final Map<String, String> properties, final String key, final String what) {
        final String value = properties.get(key);
        if (value == null || value.isBlank()) {
            throw new BusConfigurationException(TLS + "=true needs " + key + " (a PEM file: " + what + ")");
        }
        final Path path = Path.of(value.trim());
        if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
            throw new BusConfigurationException(key + "='" + value.trim() + "' is not a readable file (" + what + ")");
        }
        return path.toFile();
    }

    private static void checkCertificates(final String key, final File file) {
        try (InputStream in = Files.newInputStream(file.toPath())) {
            if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
                throw new BusConfigurationException(key + "='" + file + "' holds no certificate (expected PEM, BEGIN CERTIFICATE)");
            }
        } catch (final BusConfigurationException ex) {
            throw ex;
        } catch (final Exception ex) {
            throw new BusConfigurationException(key + "='" + file + "' is not a PEM certificate file: " + ex.getMessage());
        }
    }

    /** @return true if connections use TLS */
    public boolean enabled() {
        return server != null;
    }

    /** @return a handler for an accepted connection; the transport's own handshake timer bounds the TLS handshake */
    SslHandler newServerHandler(final ByteBufAllocator alloc) {
        final SslHandler handler = server.newHandler(alloc);
        handler.setHandshakeTimeoutMillis(0);
        return handler;
    }

    /** @return a handler for a connection this node dials */
    SslHandler newClientHandler(final ByteBufAllocator alloc, final String host, final int port) {
        final SslHandler handler = client.newHandler(alloc, host, port);
        handler.setHandshakeTimeoutMillis(0);
        return handler;
    }

    @Override
    public String toString() {
        return description;
    }
}
