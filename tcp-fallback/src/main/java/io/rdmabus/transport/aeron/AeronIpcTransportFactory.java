package io.rdmabus.transport.aeron;

import java.util.Map;

import io.rdmabus.spi.PropertyDescriptor;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportFactory;

/**
 * {@code aeron-ipc}: Aeron shared-memory IPC. Buses only meet through one media driver: give them all the same
 * {@code aeron.dir} (an external driver, or one a test/application launched); without it each bus embeds its own
 * driver and reaches only itself.
 */
public final class AeronIpcTransportFactory implements TransportFactory {
    /** Below aeron-udp (IPC stays on one host), above TCP. */
    public static final int PRIORITY = 40;

    /** For {@link java.util.ServiceLoader}. */
    public AeronIpcTransportFactory() {
    }

    @Override
    public String name() {
        return AeronMedium.IPC.factoryName();
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
        return AeronTransportConfig.properties(AeronMedium.IPC);
    }

    @Override
    public String propertyPrefix() {
        return AeronTransportConfig.PROPERTY_PREFIX;
    }

    @Override
    public Transport create(final Map<String, String> properties) {
        return new AeronTransport(AeronTransportConfig.parse(AeronMedium.IPC, properties));
    }
}
