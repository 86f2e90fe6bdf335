package io.rdmabus.transport.tcp;

import io.rdmabus.tck.TckFixture;
import io.rdmabus.tck.TransportTck;

/**
 * The transport TCK over TCP with its buses split between this JVM and a second JVM on the same host (the bus host, see
 * {@code io.rdmabus.tck.remote}): the host-side rehearsal of the two-guest rdma TCK. Every case with a local and a remote
 * bus moves its data between the two processes over the TCP transport.
 */
class TcpSplitTckTest extends TransportTck {
    @Override
    protected TckFixture createFixture() {
        final TcpSplitTckFixture fixture = TcpSplitTckFixture.start();
        fixture.warmUpBothWays();
        return fixture;
    }
}
