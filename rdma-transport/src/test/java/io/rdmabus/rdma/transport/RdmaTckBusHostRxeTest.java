package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.rdmabus.tck.remote.BusHost;
import io.rdmabus.tck.remote.RemoteCodecs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Guest 2 of the two-guest TCK ({@link RdmaTwoGuestTckTest} on guest 1): one test that serves rdma buses on this guest's
 * rxe0 to the TCK until it ends the session. It passes only if guest 1 connected, ended the session itself (SHUTDOWN,
 * after its last case) and nothing failed inside the host; it fails loudly if guest 1 never connects (within
 * {@link #CONNECT_WITHIN}, or at once when guest 1 writes {@code tck-client-gone} because its fixture failed), goes
 * silent, or the session outlasts {@link #SESSION_WITHIN}. The TCK's own verdicts are
 * guest 1's; this is the only test on guest 2, so the lab counts stay one per guest role.
 */
@Tag("rxe")
class RdmaTckBusHostRxeTest {
    /** The host's control port on guest 2's lab address. */
    static final int CONTROL_PORT = 19950;
    /** rdma_cm ports of the host's buses (guest 1's start at 17800). */
    static final int PORT_BASE = 18800;
    private static final Duration CONNECT_WITHIN = Duration.ofSeconds(900);
    private static final Duration SESSION_WITHIN = Duration.ofSeconds(2000);

    @Test
    @Timeout(value = 3000, unit = TimeUnit.SECONDS)
    void servesTheTwoGuestTck() throws Exception {
        int guest = Integer.parseInt(LabGuests.require("LAB_GUEST_INDEX"));
        assertEquals(2, guest, "the bus host runs on guest 2: lab/run-junit.sh --guests 2 --class-on 2:" + getClass().getName());
        String self = LabGuests.require("LAB_SELF_IP").trim();
        long t0 = System.nanoTime();
        // pays the FFM class initialisation and JIT of this JVM while guest 1 does the same (RdmaFixture.warmUp)
        RdmaFixture buses = new RdmaFixture(Map.of(AuthConfig.SECRET, RdmaTwoGuestTckTest.SECRET), PORT_BASE);
        BusHost.Outcome outcome;
        try {
            BusHost host = BusHost.start(new InetSocketAddress(self, CONTROL_PORT), buses::newNode, RemoteCodecs.standard());
            LabGuests.publish(RdmaTwoGuestTckTest.HOST_READY, self + ":" + host.port() + "\n");
            System.err.println("bus host: serving on " + self + ":" + host.port() + " after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            // guest 1 writes CLIENT_GONE when it gives up (e.g. its fixture failed): end at once instead of after CONNECT_WITHIN
            Path gone = LabGuests.shared(RdmaTwoGuestTckTest.CLIENT_GONE);
            outcome = host.awaitEnd(CONNECT_WITHIN, SESSION_WITHIN, () -> readIfExists(gone));
        } finally {
            buses.close();
        }
        System.err.println("bus host: " + outcome + " after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        assertTrue(outcome.connected(), "guest 1 (RdmaTwoGuestTckTest) never connected to the bus host: " + outcome.reason());
        assertTrue(outcome.shutdownRequested(), "the TCK session did not end cleanly: " + outcome.reason());
        assertTrue(outcome.errors().isEmpty(), "failures inside the bus host: " + outcome.errors());
    }

    private static String readIfExists(final Path file) {
        try {
            return Files.exists(file) ? "guest 1 wrote " + file.getFileName() + ": " + Files.readString(file).trim() : null;
        } catch (IOException ex) {
            return "guest 1 wrote " + file.getFileName() + " (unreadable: " + ex + ")";
        }
    }
}
