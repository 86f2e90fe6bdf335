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
}
