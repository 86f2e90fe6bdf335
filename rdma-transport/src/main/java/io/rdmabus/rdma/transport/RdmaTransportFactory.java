package io.rdmabus.rdma.transport;

import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportFactory;

import java.util.Map;

/**
 * ServiceLoader entry for the RDMA transport, name {@code rdma}, the highest priority of the project's transports so
 * {@code "auto"} picks it wherever an RDMA device has an ACTIVE port. Probing reads sysfs first and loads
 * libibverbs/librdmacm only if a device is present, so it never fails on a host without RDMA.
 */
public final class RdmaTransportFactory implements TransportFactory {
    /** Above Aeron and TCP. */
    public static final int PRIORITY = 300;

    /** For ServiceLoader. */
    public RdmaTransportFactory() {
    }

    @Override
    public String name() {
        return RdmaTransport.NAME;
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    @Override
    public String unavailableReason() {
        return RdmaDevices.unavailableReason();
    }

    @Override
    public Transport create(final Map<String, String> properties) {
        return new RdmaTransport(RdmaTransportConfig.parse(properties));
    }
}
