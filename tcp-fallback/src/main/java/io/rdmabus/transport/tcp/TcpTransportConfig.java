package io.rdmabus.transport.tcp;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import io.rdmabus.BusConfigurationException;
import io.rdmabus.spi.BusSecret;

/**
 * Settings of the TCP transport, parsed from the bus's transport properties. Every key is optional; an unknown key
 * or a bad value fails fast with a message naming the key and what to change.
 *
 * @param bindHost              interface to listen on ({@value #BIND}, host part)
 * @param bindPort              port to listen on, 0 for an ephemeral port ({@value #BIND}, port part)
 * @param reconnectMinMs        first retry delay after a seed connection failed or was lost
 * @param reconnectMaxMs        cap of the exponential retry delay
 * @param maxFrameBytes         largest frame (bus header included) carried in one piece, for both deliveries
 * @param outboundBufferBytes   per-connection bytes queued for sending before a reliable publication is back-pressured
 *                              (best-effort frames are dropped instead); the connection's outbound ring, allocated when it
 *                              opens, is this rounded up to a power of two and to at least eight of the largest messages
 * @param topicWindowBytes      per reliable topic and peer: bytes a publisher may have sent to this node and not yet seen
 *                              taken by its subscriptions ({@value #TOPIC_WINDOW_BYTES}); bounds what this node queues for
 *                              a topic whose subscriber is slow, while other topics go on
 * @param ioThreads             event loop threads (1 or 2; the machine this runs on may have few cores)
 * @param ioSpinUs              microseconds an event loop keeps polling after its last work before it blocks in select
 *                              ({@value #IO_SPIN_US}; 0 = block at once, as netty does)
 * @param connectTimeoutMs      TCP connect timeout to a seed
 * @param handshakeTimeoutMs    a connection that has not completed the hello exchange by then is closed
 * @param lingerMs              bound on how long closing a publication or the transport waits for queued frames to be written
 * @param secret                the bus secret peers must prove ({@value #SECRET}, {@value #SECRET_FILE}; see {@link BusSecret})
 * @param tls                   TLS on every connection, or {@link TcpTlsConfig#OFF} ({@value TcpTlsConfig#TLS} and its keys)
 */
public record TcpTransportConfig(String bindHost, int bindPort, long reconnectMinMs, long reconnectMaxMs, int maxFrameBytes,
                                 long outboundBufferBytes, int topicWindowBytes, int ioThreads, long ioSpinUs, long connectTimeoutMs, long handshakeTimeoutMs,
                                 long lingerMs, BusSecret secret, TcpTlsConfig tls) {
    /** {@code host:port} to listen on; default {@code 127.0.0.1:0} (loopback, ephemeral port). */
    public static final String BIND = "tcp.bind";
    /** Milliseconds, first reconnect delay; default 50. */
    public static final String RECONNECT_MIN_MS = "tcp.reconnect.min.ms";
    /** Milliseconds, largest reconnect delay; default 2000. */
    public static final String RECONNECT_MAX_MS = "tcp.reconnect.max.ms";
    /** Bytes, largest frame; default 65536, range 64..16 MiB. Every node must use the same value. */
    public static final String MAX_FRAME_BYTES = "tcp.frame.max.bytes";
    /** Bytes queued per connection before back-pressure/drops; default 1 MiB. */
    public static final String OUTBOUND_BUFFER_BYTES = "tcp.outbound.buffer.bytes";
    /** Bytes, per reliable topic and peer; default the larger of 1 MiB and four frames; at least two frames. */
    public static final String TOPIC_WINDOW_BYTES = "tcp.topic.window.bytes";
    /** Event loop threads, 1..2; default 1. */
    public static final String IO_THREADS = "tcp.io.threads";
    /**
     * Microseconds an event loop polls after its last I/O or task before it blocks, 0..10000; default 50. Saves the
     * wake-up system call and the scheduling delay when a frame follows within the window (a stream, a reply).
     */
    public static final String IO_SPIN_US = "tcp.io.spin.us";
    /** Largest accepted {@link #IO_SPIN_US}. */
    public static final long IO_SPIN_US_LIMIT = 10_000;
    /** Milliseconds; default 2000. */
    public static final String CONNECT_TIMEOUT_MS = "tcp.connect.timeout.ms";
    /** Milliseconds; default 5000. */
    public static final String HANDSHAKE_TIMEOUT_MS = "tcp.handshake.timeout.ms";
    /** Milliseconds; default 5000. */
    public static final String LINGER_MS = "tcp.linger.ms";
    /** The prefix of the bus secret's keys ({@link BusSecret}). */
    public static final String SECRET_PREFIX = "tcp";
    /** The bus secret (UTF-8, at least 16 bytes) every peer must prove, or {@code none}; default unset (a warning at start). */
    public static final String SECRET = "tcp.secret";
    /** A file holding the bus secret (its bytes, one trailing newline dropped); preferred over {@link #SECRET}. */
    public static final String SECRET_FILE = "tcp.secret.file";

    /** Every key this transport accepts. */
    public static final List<String> KNOWN_KEYS = List.of(BIND, RECONNECT_MIN_MS, RECONNECT_MAX_MS, MAX_FRAME_BYTES, OUTBOUND_BUFFER_BYTES,
        TOPIC_WINDOW_BYTES, IO_THREADS, IO_SPIN_US, CONNECT_TIMEOUT_MS, HANDSHAKE_TIMEOUT_MS, LINGER_MS, SECRET, SECRET_FILE, TcpTlsConfig.TLS,
        TcpTlsConfig.CERT, TcpTlsConfig.KEY, TcpTlsConfig.TRUST);

    /** Smallest accepted {@link #MAX_FRAME_BYTES}. */
    public static final int MIN_FRAME_BYTES = 64;
    /** Largest accepted {@link #MAX_FRAME_BYTES}. */
    public static final int MAX_FRAME_BYTES_LIMIT = 16 * 1024 * 1024;
    /** The largest {@value #OUTBOUND_BUFFER_BYTES}: a connection's outbound ring is at most 1 GiB. */
    public static final long MAX_OUTBOUND_BUFFER_BYTES = 1L << 30;

    /** Validates. */
    public TcpTransportConfig {
        if (reconnectMinMs < 1 || reconnectMaxMs < reconnectMinMs) {
            throw new BusConfigurationException(RECONNECT_MIN_MS + "=" + reconnectMinMs + " and " + RECONNECT_MAX_MS + "=" + reconnectMaxMs
                + ": need 1 <= min <= max");
        }
        if (maxFrameBytes < MIN_FRAME_BYTES || maxFrameBytes > MAX_FRAME_BYTES_LIMIT) {
            throw new BusConfigurationException(MAX_FRAME_BYTES + "=" + maxFrameBytes + " is out of range " + MIN_FRAME_BYTES + ".."
                + MAX_FRAME_BYTES_LIMIT);
        }
        if (outboundBufferBytes < 2L * maxFrameBytes) {
            throw new BusConfigurationException(OUTBOUND_BUFFER_BYTES + "=" + outboundBufferBytes + " must hold at least two frames (>= "
                + 2L * maxFrameBytes + " with " + MAX_FRAME_BYTES + "=" + maxFrameBytes + ")");
        }
        if (outboundBufferBytes > MAX_OUTBOUND_BUFFER_BYTES) {
            throw new BusConfigurationException(OUTBOUND_BUFFER_BYTES + "=" + outboundBufferBytes + " is above " + MAX_OUTBOUND_BUFFER_BYTES
                + " (each connection allocates its outbound ring up front)");
        }
        if (topicWindowBytes < 2L * (maxFrameBytes + TcpProtocol.DATA_HEADER)) {
            throw new BusConfigurationException(TOPIC_WINDOW_BYTES + "=" + topicWindowBytes + " must hold at least two frames (>= "
                + 2L * (maxFrameBytes + TcpProtocol.DATA_HEADER) + " with " + MAX_FRAME_BYTES + "=" + maxFrameBytes + ")");
        }
        if (ioThreads < 1 || ioThreads > 2) {
            throw new BusConfigurationException(IO_THREADS + "=" + ioThreads + ": use 1 or 2");
        }
        if (ioSpinUs < 0 || ioSpinUs > IO_SPIN_US_LIMIT) {
            throw new BusConfigurationException(IO_SPIN_US + "=" + ioSpinUs + " is out of range 0.." + IO_SPIN_US_LIMIT);
        }
        if (connectTimeoutMs < 1 || handshakeTimeoutMs < 1 || lingerMs < 0) {
            throw new BusConfigurationException(CONNECT_TIMEOUT_MS + ", " + HANDSHAKE_TIMEOUT_MS + " must be >= 1 and " + LINGER_MS
                + " >= 0");
        }
        if (secret == null || tls == null) {
            throw new BusConfigurationException("tcp transport settings need a secret (BusSecret, possibly unset) and tls (TcpTlsConfig.OFF)");
        }
    }

    /** @return the defaults */
    public static TcpTransportConfig defaults() {
        return from(Map.of());
    }

    /**
     * @param properties transport properties ({@link #KNOWN_KEYS})
     * @return the parsed settings
     * @throws BusConfigurationException for an unknown key or a bad value
     */
    public static TcpTransportConfig from(final Map<String, String> properties) {
        final TreeSet<String> unknown = new TreeSet<>(properties.keySet());
        unknown.removeAll(KNOWN_KEYS);
        if (!unknown.isEmpty()) {
            throw new BusConfigurationException("Unknown tcp transport properties " + unknown + ": known keys are " + KNOWN_KEYS);
        }
        final InetSocketAddress bind = parseEndpoint(BIND, properties.getOrDefault(BIND, "127.0.0.1:0"));
        final int maxFrameBytes = (int) number(properties, MAX_FRAME_BYTES, 65536);
        return new TcpTransportConfig(bind.getHostString(), bind.getPort(),
            number(properties, RECONNECT_MIN_MS, 50), number(properties, RECONNECT_MAX_MS, 2000),
            maxFrameBytes, number(properties, OUTBOUND_BUFFER_BYTES, 1024 * 1024),
            (int) number(properties, TOPIC_WINDOW_BYTES, defaultTopicWindowBytes(maxFrameBytes)), (int) number(properties, IO_THREADS, 1),
            number(properties, IO_SPIN_US, 50),
            number(properties, CONNECT_TIMEOUT_MS, 2000),
            number(properties, HANDSHAKE_TIMEOUT_MS, 5000), number(properties, LINGER_MS, 5000), BusSecret.parse(SECRET_PREFIX, properties),
            TcpTlsConfig.from(properties));
    }

    /**
     * @param maxFrameBytes the largest frame
     * @return the default {@link #TOPIC_WINDOW_BYTES}: 1 MiB, or four whole frames if that is more
     */
    public static int defaultTopicWindowBytes(final int maxFrameBytes) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(1024L * 1024, 4L * (maxFrameBytes + TcpProtocol.DATA_HEADER)));
    }

    private static long number(final Map<String, String> properties, final String key, final long defaultValue) {
        final String value = properties.get(key);
        if (value == null) {
            return defaultValue;
        }
        try {
            final long parsed = Long.parseLong(value.trim());
            if (parsed > Integer.MAX_VALUE && !key.equals(OUTBOUND_BUFFER_BYTES)) {
                throw new NumberFormatException("too large");
            }
            return parsed;
        } catch (final NumberFormatException ex) {
            throw new BusConfigurationException("Transport property " + key + "='" + value + "' is not a valid number (default "
                + defaultValue + ")");
        }
    }

    /**
     * Parses {@code host:port} or {@code [ipv6]:port} without resolving the host.
     *
     * @param what     the property or seed name, for the error message
     * @param endpoint the text
     * @return an unresolved address
     * @throws BusConfigurationException if it is not {@code host:port} with a port in 0..65535
     */
    public static InetSocketAddress parseEndpoint(final String what, final String endpoint) {
        final String text = endpoint == null ? "" : endpoint.trim();
        final int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new BusConfigurationException(what + "='" + endpoint + "' is not host:port (e.g. 127.0.0.1:7701)");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        final int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (final NumberFormatException ex) {
            throw new BusConfigurationException(what + "='" + endpoint + "': the port is not a number");
        }
        if (port < 0 || port > 65535) {
            throw new BusConfigurationException(what + "='" + endpoint + "': port " + port + " is out of range 0..65535");
        }
        return InetSocketAddress.createUnresolved(host, port);
    }
}
