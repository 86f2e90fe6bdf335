package io.rdmabus.transport.tcp;

import java.util.Map;

import io.rdmabus.spi.PropertyDescriptor;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportFactory;

/**
 * Finds the TCP transport through {@link java.util.ServiceLoader} under the name {@value #NAME}. It runs anywhere,
 * so it has the lowest priority: {@code "auto"} picks it only when neither RDMA nor Aeron is available.
 */
public final class TcpTransportFactory implements TransportFactory {
    /** The name users select it by. */
    public static final String NAME = "tcp";
    /** Lowest of the project's transports (RDMA above Aeron above TCP). */
    public static final int PRIORITY = 10;

    private static final Map<String, PropertyDescriptor> PROPERTIES = PropertyDescriptor.declare(TcpTransportConfig.KNOWN_KEYS,
        PropertyDescriptor.text(TcpTransportConfig.BIND, "127.0.0.1:0", "host:port to listen on (port 0 = ephemeral)"),
        PropertyDescriptor.integer(TcpTransportConfig.RECONNECT_MIN_MS, 50, 1, Integer.MAX_VALUE, "first reconnect delay to a seed, ms"),
        PropertyDescriptor.integer(TcpTransportConfig.RECONNECT_MAX_MS, 2000, 1, Integer.MAX_VALUE, "largest (exponential) reconnect delay, ms"),
        PropertyDescriptor.integer(TcpTransportConfig.MAX_FRAME_BYTES, 65536, TcpTransportConfig.MIN_FRAME_BYTES,
            TcpTransportConfig.MAX_FRAME_BYTES_LIMIT, "largest frame, bus header included; the same on every node"),
        PropertyDescriptor.integer(TcpTransportConfig.OUTBOUND_BUFFER_BYTES, 1024 * 1024, 2L * TcpTransportConfig.MIN_FRAME_BYTES,
            Long.MAX_VALUE, "bytes queued per connection before reliable back-pressure / best-effort drops (>= 2 frames)"),
        PropertyDescriptor.integer(TcpTransportConfig.TOPIC_WINDOW_BYTES, TcpTransportConfig.defaultTopicWindowBytes(65536),
            2L * TcpTransportConfig.MIN_FRAME_BYTES, Integer.MAX_VALUE,
            "per reliable topic and peer: bytes sent and not yet taken by this node's subscriptions (>= 2 frames)"),
        PropertyDescriptor.integer(TcpTransportConfig.IO_THREADS, 1, 1, 2, "event loop threads"),
        PropertyDescriptor.integer(TcpTransportConfig.IO_SPIN_US, 50, 0, TcpTransportConfig.IO_SPIN_US_LIMIT,
            "microseconds an event loop polls after its last work before it blocks"),
        PropertyDescriptor.integer(TcpTransportConfig.CONNECT_TIMEOUT_MS, 2000, 1, Integer.MAX_VALUE, "TCP connect timeout to a seed, ms"),
        PropertyDescriptor.integer(TcpTransportConfig.HANDSHAKE_TIMEOUT_MS, 5000, 1, Integer.MAX_VALUE,
            "a connection without a completed hello by then is closed, ms"),
        PropertyDescriptor.integer(TcpTransportConfig.LINGER_MS, 5000, 0, Integer.MAX_VALUE,
            "bound on waiting for queued frames when closing, ms"),
        PropertyDescriptor.secret(TcpTransportConfig.SECRET, "the bus secret peers must prove (at least 16 bytes), or none"),
        PropertyDescriptor.text(TcpTransportConfig.SECRET_FILE, "", "a file holding the bus secret (preferred over tcp.secret)"),
        PropertyDescriptor.bool(TcpTlsConfig.TLS, false, "mutual TLS on every connection (every node the same)"),
        PropertyDescriptor.text(TcpTlsConfig.CERT, "", "this node's certificate chain, PEM (with tcp.tls=true)"),
        PropertyDescriptor.text(TcpTlsConfig.KEY, "", "this node's private key, unencrypted PKCS#8 PEM (with tcp.tls=true)"),
        PropertyDescriptor.text(TcpTlsConfig.TRUST, "", "the CA certificates a peer's certificate must chain to, PEM (with tcp.tls=true)"));

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    @Override
    public String unavailableReason() {
        return null;
    }

    @Override
    public Map<String, PropertyDescriptor> properties() {
        return PROPERTIES;
    }

    @Override
    public Transport create(final Map<String, String> properties) {
        return new TcpTransport(TcpTransportConfig.from(properties));
    }
}
