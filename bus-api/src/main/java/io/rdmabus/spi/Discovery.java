package io.rdmabus.spi;

import java.util.List;

/**
 * Broker-less discovery: who publishes a topic and where. No central process is required: implementations are
 * a static seed list ({@link StaticSeedDiscovery}), a transport's own channels (Aeron multicast/IPC derive
 * everything from the topic), or, for RDMA, advertisements on a UD control multicast group.
 */
public interface Discovery extends AutoCloseable {
    /**
     * @param transport a transport name, e.g. {@code "tcp"}
     * @return the endpoints to contact for that transport, in preference order (may be empty)
     */
    List<String> endpoints(String transport);

    @Override
    default void close() {
    }
}
