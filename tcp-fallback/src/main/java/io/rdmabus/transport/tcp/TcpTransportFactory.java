package io.rdmabus.transport.tcp;

import java.util.Map;

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
    public Transport create(final Map<String, String> properties) {
        return new TcpTransport(TcpTransportConfig.from(properties));
    }
}
