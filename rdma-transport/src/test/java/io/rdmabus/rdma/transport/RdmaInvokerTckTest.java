package io.rdmabus.rdma.transport;

import io.rdmabus.ThreadingMode;
import io.rdmabus.tck.TckFixture;
import io.rdmabus.tck.TransportTck;

import java.util.Map;

import org.junit.jupiter.api.Tag;

/**
 * The transport TCK over RDMA RC on real soft-RoCE with every bus in {@link ThreadingMode#INVOKER}: each bus's rdma
 * poller is hosted in the bus's duty cycle, which an application loop drives through {@code Bus.doWork()}
 * ({@link io.rdmabus.tck.InvokedBus}); the cm agent keeps its own thread. Runs only in the guest lab, in the same job as
 * {@link RdmaTckTest}: {@code lab/run-junit.sh --module rdma-transport --guests 1 --class
 * io.rdmabus.rdma.transport.RdmaInvokerTckTest}. Its own rdma_cm ports, so it may share a JVM with {@link RdmaTckTest}.
 */
@Tag("rxe")
class RdmaInvokerTckTest extends TransportTck {
    /** Past the ports {@link RdmaTckTest} takes from {@code RdmaFixture}'s base (one per bus, a few hundred per suite). */
    private static final int PORT_BASE = 27800;

    @Override
    protected TckFixture createFixture() {
        return new RdmaFixture(Map.of(AuthConfig.SECRET, "rdma-tck-bus-secret-0123456789"), PORT_BASE, ThreadingMode.INVOKER);
    }
}
