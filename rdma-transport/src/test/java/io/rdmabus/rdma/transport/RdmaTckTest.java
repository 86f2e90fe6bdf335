package io.rdmabus.rdma.transport;

import io.rdmabus.tck.TckFixture;
import io.rdmabus.tck.TransportTck;

import java.util.Map;

import org.junit.jupiter.api.Tag;

/**
 * The transport TCK over RDMA RC on real soft-RoCE, several buses in one JVM on one rxe device. Runs only in the
 * guest lab: {@code lab/run-junit.sh --module rdma-transport --guests 1 --class io.rdmabus.rdma.transport.RdmaTckTest}.
 */
@Tag("rxe")
class RdmaTckTest extends TransportTck {
    @Override
    protected TckFixture createFixture() {
        return new RdmaFixture(Map.of());
    }
}
