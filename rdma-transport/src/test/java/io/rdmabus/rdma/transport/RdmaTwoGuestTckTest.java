package io.rdmabus.rdma.transport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
    /** The file in {@code LAB_SHARED} where this side says why it gave up before or during the session. */
    static final String CLIENT_GONE = "tck-client-gone";
    private static final Pattern HOST_PORT = Pattern.compile("(\\S+):(\\d+)");
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
            Matcher hostPort = awaitHost();
            RemoteBusClient client = RemoteBusClient.connect(new InetSocketAddress(hostPort.group(1), Integer.parseInt(hostPort.group(2))),
                Duration.ofSeconds(60), RemoteCodecs.standard());
            System.err.println("two-guest TCK: connected to the bus host " + hostPort.group() + " after "
                + (System.nanoTime() - t0) / 1_000_000 + " ms");
            RdmaSplitFixture fixture = new RdmaSplitFixture(local, client);
            fixture.warmUpAcrossGuests();
            System.err.println("two-guest TCK: fixture ready after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            return fixture;
        } catch (Exception | AssertionError ex) {
            local.close();
            try {
                // so that guest 2 stops waiting for us now rather than after its connect bound
                LabGuests.publish(CLIENT_GONE, "the TCK fixture failed: " + ex);
            } catch (IOException | RuntimeException ignored) {
                // the failure below says what matters
            }
            throw new AssertionError("two-guest TCK fixture: " + ex, ex);
        }
    }

    /** Waits for the host's {@code ip:port}; the file is renamed into place, the content check is a second guard. */
    private static Matcher awaitHost() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HOST_READY_WAIT_MS);
        Path ready = LabGuests.shared(HOST_READY);
        while (true) {
            if (Files.exists(ready)) {
                Matcher m = HOST_PORT.matcher(Files.readString(ready).trim());
                if (m.matches()) {
                    return m;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("guest 2's bus host did not write " + ready + " (ip:port) within " + HOST_READY_WAIT_MS + " ms");
            }
            Thread.sleep(200);
        }
    }
}
