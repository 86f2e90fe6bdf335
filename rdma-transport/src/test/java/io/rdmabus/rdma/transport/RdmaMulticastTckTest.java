package io.rdmabus.rdma.transport;

import io.rdmabus.tck.TckFixture;
import io.rdmabus.tck.TransportTck;

import java.util.Map;

import org.junit.jupiter.api.Tag;

/**
 * The transport TCK with BEST_EFFORT over UD multicast ({@code rdma.ud.mode=multicast}: one group per topic) on real
 * soft-RoCE, several buses in one JVM on one rxe device (rxe delivers a group's datagrams to every attached QP of the
 * device, so multicast works in one guest). {@link RdmaTckTest} covers the default unicast mode. Every bus has the
 * same bus secret, as in {@link RdmaTckTest}. Guest lab only:
 * {@code lab/run-junit.sh --module rdma-transport --guests 1 --class io.rdmabus.rdma.transport.RdmaMulticastTckTest}.
 */
@Tag("rxe")
class RdmaMulticastTckTest extends TransportTck {
    @Override
    protected TckFixture createFixture() {
        return new RdmaFixture(Map.of(UdConfig.MODE, "multicast", AuthConfig.SECRET, "rdma-tck-bus-secret-0123456789"));
    }
}
