package io.rdmabus.tck;

import io.rdmabus.Bus;
import io.rdmabus.spi.Transport;

/**
 * How the transport TCK gets buses of one transport configuration. Each transport's test module implements one
 * fixture per configuration (e.g. Aeron UDP unicast, Aeron UDP multicast, Aeron IPC, TCP) and runs the suite with it.
 */
public interface TckFixture extends AutoCloseable {
    /** @return a short description, e.g. {@code "aeron-udp multicast on loopback"} */
    String name();

    /**
     * Creates a started bus, a distinct node that reaches every bus this fixture created before or after it
     * (for seed-list transports: the fixture passes the earlier nodes' addresses as seeds).
     *
     * @param busName the bus name
     * @return a started bus; the test closes it
     */
    Bus newBus(String busName);

    /**
     * @return a started raw transport that reaches the same buses, used to inject malformed frames through
     *     {@code addPublication(...).tryClaim(...)}; the test closes it
     */
    Transport newRawTransport();

    /** @return the largest best-effort frame of this transport, header included */
    int maxBestEffortFrameLength();

    /** Releases what the fixture shares between buses (e.g. an embedded media driver). */
    @Override
    void close();
}
