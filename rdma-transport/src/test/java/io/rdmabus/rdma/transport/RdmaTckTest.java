package io.rdmabus.rdma.transport;

import io.rdmabus.tck.TckFixture;
import io.rdmabus.tck.TransportTck;

import java.util.Map;

import org.junit.jupiter.api.Tag;

/**
 * The transport TCK over RDMA RC on real soft-RoCE, several buses in one JVM on one rxe device. Runs only in the
 * guest lab: {@code lab/run-junit.sh --module rdma-transport --guests 1 --class io.rdmabus.rdma.transport.RdmaTckTest}.
 * Every bus has the same bus secret, so every connection of the suite goes through the HMAC handshake.
 */
@Tag("rxe")
class RdmaTckTest extends TransportTck {
    @Override
    protected TckFixture createFixture() {
        return new RdmaFixture(Map.of(AuthConfig.SECRET, "rdma-tck-bus-secret-0123456789"));
    }
}
