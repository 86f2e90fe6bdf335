package io.rdmabus.spi;

import java.util.Map;

/**
 * Found through {@link java.util.ServiceLoader}; {@code Bus.builder().transport("name")} picks one by name and
 * {@code "auto"} picks the available one with the highest {@link #priority()} (RDMA above Aeron above TCP).
 */
public interface TransportFactory {
    /** @return the name users select it by, e.g. {@code "aeron"} */
    String name();

    /** @return higher wins in automatic selection */
    int priority();

    /** @return why it cannot run here, or {@code null} if it can (e.g. "no active RDMA device") */
    String unavailableReason();

    /**
     * @param properties transport settings (keys documented by each transport); unknown keys are an error
     * @return a new, unstarted transport
     */
    Transport create(Map<String, String> properties);

    /**
     * The properties {@link #create} accepts, so configuration from outside code ({@link io.rdmabus.config.BusConfig})
     * can refuse unknown keys and bad values before the transport is made, and {@code rdma-bus config} can list them.
     *
     * @return key to descriptor, in the order to show them; empty (the default) = not declared: every key under
     *     {@link #propertyPrefix()} is passed on unchecked and {@link #create} judges it
     */
    default Map<String, PropertyDescriptor> properties() {
        return Map.of();
    }

    /**
     * Configuration from outside code names this transport's properties with this prefix: a key that does not start
     * with it is prefixed (Aeron's {@code mtu} is {@code aeron.mtu} in a file, {@code AERON_MTU} in the environment).
     *
     * @return e.g. {@code "tcp."}; by default the name followed by a dot
     */
    default String propertyPrefix() {
        return name() + ".";
    }
}
