package io.rdmabus.transport.aeron;

/** Which Aeron medium a transport uses. */
public enum AeronMedium {
    /** UDP unicast (multi-destination-cast) or multicast, across hosts. */
    UDP("aeron-udp"),
    /** Shared-memory IPC through one media driver on one host. */
    IPC("aeron-ipc");

    private final String factoryName;

    AeronMedium(final String factoryName) {
        this.factoryName = factoryName;
    }

    /** @return the transport factory name, also the transport's {@code name()} */
    public String factoryName() {
        return factoryName;
    }
}
