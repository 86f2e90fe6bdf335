package io.rdmabus.transport.aeron;

import java.util.Map;

import io.rdmabus.spi.PropertyDescriptor;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportFactory;

/** {@code aeron-udp}: Aeron over UDP unicast (multi-destination-cast) or multicast, with an embedded media driver. */
public final class AeronUdpTransportFactory implements TransportFactory {
    /** Below RDMA, above aeron-ipc and TCP. */
    public static final int PRIORITY = 50;

    /** For {@link java.util.ServiceLoader}. */
    public AeronUdpTransportFactory() {
    }

    @Override
    public String name() {
        return AeronMedium.UDP.factoryName();
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    @Override
    public String unavailableReason() {
        return null; // pure Java driver: runs wherever UDP sockets do
    }

    @Override
    public Map<String, PropertyDescriptor> properties() {
        return AeronTransportConfig.properties(AeronMedium.UDP);
    }

    @Override
    public String propertyPrefix() {
        return AeronTransportConfig.PROPERTY_PREFIX;
    }

    @Override
    public Transport create(final Map<String, String> properties) {
        return new AeronTransport(AeronTransportConfig.parse(AeronMedium.UDP, properties));
    }
}
