package io.rdmabus.rdma.transport;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;

import io.rdmabus.tck.TckFixture;
import io.rdmabus.tck.TransportTck;
import io.rdmabus.tck.remote.RemoteBusClient;
import io.rdmabus.tck.remote.RemoteCodecs;

import org.junit.jupiter.api.Tag;

/**
 * The transport TCK over rdma across two rxe guests: this class runs on guest 1, {@link RdmaTckBusHostRxeTest} on guest 2
 * (its bus host), and each case's buses alternate between the two guests ({@link io.rdmabus.tck.remote.SplitTckFixture}),
 * so the data of every case with a bus on each side crosses the lab bridge over RC (reliable) or UD (best effort). Every
 * bus has the same bus secret. Run:
 * <pre>
 * lab/run-junit.sh --module rdma-transport --guests 2 --timeout-s 2400 \
 *     --class-on 1:io.rdmabus.rdma.transport.RdmaTwoGuestTckTest --class-on 2:io.rdmabus.rdma.transport.RdmaTckBusHostRxeTest
 * </pre>
 */
@Tag("rxe")
class RdmaTwoGuestTckTest extends TransportTck {
    static final String SECRET = "rdma-tck-bus-secret-0123456789";
    /** The file in {@code LAB_SHARED} where the bus host writes {@code ip:port} once it serves. */
    static final String HOST_READY = "tck-bus-host-ready";
    /** Guest 2 starts its JVM and warms its rxe path up in parallel with ours; under TCG that takes minutes. */
    private static final long HOST_READY_WAIT_MS = 600_000;

    @Override
    protected TckFixture createFixture() {
        int guest = Integer.parseInt(LabGuests.require("LAB_GUEST_INDEX"));
        int guests = Integer.parseInt(LabGuests.require("LAB_GUEST_COUNT"));
        if (guest != 1 || guests < 2) {
            throw new AssertionError("RdmaTwoGuestTckTest runs on guest 1 of 2 (guest " + guest + " of " + guests + "): "
                + "lab/run-junit.sh --guests 2 --class-on 1:" + getClass().getName() + " --class-on 2:" + RdmaTckBusHostRxeTest.class.getName());
        }
        long t0 = System.nanoTime();
        RdmaFixture local = new RdmaFixture(Map.of(AuthConfig.SECRET, SECRET));
        try {
            LabGuests.awaitFile(HOST_READY, HOST_READY_WAIT_MS);
            String[] hostPort = Files.readString(LabGuests.shared(HOST_READY)).trim().split(":");
            RemoteBusClient client = RemoteBusClient.connect(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])),
                Duration.ofSeconds(60), RemoteCodecs.standard());
            System.err.println("two-guest TCK: connected to the bus host " + String.join(":", hostPort) + " after "
                + (System.nanoTime() - t0) / 1_000_000 + " ms");
            RdmaSplitFixture fixture = new RdmaSplitFixture(local, client);
            fixture.warmUpAcrossGuests();
            System.err.println("two-guest TCK: fixture ready after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            return fixture;
        } catch (Exception | AssertionError ex) {
            local.close();
            throw new AssertionError("two-guest TCK fixture: " + ex, ex);
        }
    }
}
