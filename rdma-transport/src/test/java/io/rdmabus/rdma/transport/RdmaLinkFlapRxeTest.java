package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.spi.StaticSeedDiscovery;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A RELIABLE stream across two rxe guests survives the subscriber guest's NIC going down and up (the soak's fault
 * "ip link set eth0 down" that left a publisher stalled for good): guest 1 publishes {@value #COUNT} messages, paced;
 * guest 2 subscribes, takes its own link down for {@value #DOWN_S} s once {@value #FLAP_AT} have arrived, brings it
 * up, and must then receive every message exactly once and in order, while the publisher must get all of them out.
 * The guests coordinate through files in {@code LAB_SHARED}.
 */
@Tag("rxe")
@Timeout(value = 420, unit = TimeUnit.SECONDS)
class RdmaLinkFlapRxeTest {
    private static final int COUNT = 3000;
    private static final int FLAP_AT = 300;
    private static final int DOWN_S = 15;
    private static final int PORT = 19911;
    private static final long WAIT_MS = 240_000;
    /** Bound on the recovery after the link is back, and again on the catch-up. */
    private static final long RECOVER_MS = 60_000;
    private static final Topic<String> TOPIC = Topic.of("link-flap", Codecs.utf8(), Delivery.RELIABLE);

    @Test
    void aReliableStreamSurvivesTheSubscriberLinkGoingDownAndUp() throws Exception {
        int guest = Integer.parseInt(LabGuests.require("LAB_GUEST_INDEX"));
        int guests = Integer.parseInt(LabGuests.require("LAB_GUEST_COUNT"));
        assertTrue(guests >= 2, "needs 2 guests: lab/run-junit.sh --module rdma-transport --guests 2");
        String self = LabGuests.require("LAB_SELF_IP").trim();
        String publisherIp = LabGuests.require("LAB_GUEST_IPS").trim().split("\\s+")[0];
        if (guest == 1) {
            publish(self);
        } else if (guest == 2) {
            subscribeAndFlap(self, publisherIp);
        }
    }

    private static Bus bus(final String name, final String self, final List<String> seeds) {
        return Bus.builder().name(name).transport(RdmaTransport.NAME).transportProperty(RdmaTransportConfig.BIND, self)
                .transportProperty(RdmaTransportConfig.CM_PORT_BASE, String.valueOf(PORT)).transportProperty(RdmaTransportConfig.CM_PORT_RANGE, "1")
                .transportProperty(AuthConfig.SECRET, "link-flap-test-secret-0123456789")
                .discovery(new StaticSeedDiscovery(Map.of(RdmaTransport.NAME, seeds))).idleStrategy("backoff").build();
    }

    private static void publish(final String self) throws Exception {
        try (Bus bus = bus("flap-pub", self, List.of())) {
            BusPublication<String> pub = bus.publication(TOPIC);
            LabGuests.signal("flap-pub-ready");
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            int sent = 0;
            long longestWaitNs = 0;
            long lastOkNs = System.nanoTime();
            long t0 = lastOkNs;
            while (sent < COUNT && System.nanoTime() < deadline) {
                int status = pub.offer("m" + sent);
                if (status == PublishStatus.OK) {
                    long now = System.nanoTime();
                    if (sent > 0) {
                        longestWaitNs = Math.max(longestWaitNs, now - lastOkNs);
                    }
                    lastOkNs = now;
                    sent++;
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // ~200/s: the flap lands mid-stream
                } else if (status == PublishStatus.CLOSED || Files.exists(LabGuests.shared("flap-sub-done"))) {
                    break; // the subscriber gave up
                } else {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // back-pressured, or no subscriber connected
                }
            }
            System.err.println("flap publisher: " + sent + " of " + COUNT + " published in " + (System.nanoTime() - t0) / 1_000_000
                    + " ms; longest wait between two accepted offers " + longestWaitNs / 1_000_000 + " ms; counters "
                    + bus.stats().transportCounters());
            assertEquals(COUNT, sent, "the publisher could not get every message out (stalled after the subscriber's link came back?)");
            LabGuests.awaitFile("flap-sub-done", WAIT_MS);
        }
    }

    private static void subscribeAndFlap(final String self, final String publisherIp) throws Exception {
        LabGuests.awaitFile("flap-pub-ready", WAIT_MS);
        List<Received<String>> got = new CopyOnWriteArrayList<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        boolean down = false;
        try (Bus bus = bus("flap-sub", self, List.of(publisherIp + ":" + PORT))) {
            bus.subscribeReceived(TOPIC, SubscribeOptions.defaults()).subscribe(got::add, error::set);
            assertTrue(await(() -> got.size() >= FLAP_AT, WAIT_MS), "only " + got.size() + " before the flap");
            int before = got.size();
            run("ip", "link", "set", "eth0", "down");
            down = true;
            long tDown = System.nanoTime();
            Thread.sleep(TimeUnit.SECONDS.toMillis(DOWN_S));
            run("ip", "link", "set", "eth0", "up");
            down = false;
            long tUp = System.nanoTime();
            int atUp = got.size();
            // the diagnostics are slow under TCG (seconds per command): only when something went wrong
            assertTrue(atUp < COUNT, "the whole stream arrived before the link came back: the flap did not land mid-stream");
            boolean flowing = await(() -> got.size() > atUp, RECOVER_MS);
            long tFlowing = System.nanoTime();
            if (!flowing) {
                showStack("nothing arrived " + RECOVER_MS + " ms after the link came up");
                probeWithANewBus(self, publisherIp);
            }
            boolean all = flowing && await(() -> got.size() >= COUNT, RECOVER_MS);
            long tAll = System.nanoTime();
            LabGuests.signal("flap-sub-done");
            System.err.println("flap subscriber: " + before + " received before the link went down, " + atUp + " when it came up "
                    + (tUp - tDown) / 1_000_000 + " ms later; the next message " + (tFlowing - tUp) / 1_000_000 + " ms after the link came up; "
                    + got.size() + " of " + COUNT + " " + (tAll - tUp) / 1_000_000 + " ms after it; counters " + bus.stats().transportCounters());
            assertTrue(flowing, "nothing arrived after the link came back");
            assertTrue(all, "received " + got.size() + " of " + COUNT);
            assertNull(error.get(), "the Flux failed");
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < COUNT; i++) {
                expected.add("m" + i);
            }
            List<String> values = new ArrayList<>();
            for (Received<String> r : got) {
                values.add(r.value());
            }
            assertEquals(expected, values, "lost, duplicated or reordered across the link flap");
            assertTrue(got.stream().allMatch(r -> r.lostBefore() == 0), "a RELIABLE stream reported a gap");
            Thread.sleep(2000); // let guest 1 see the signal before our connection goes
        } finally {
            LabGuests.signal("flap-sub-done"); // a failed subscriber must not leave the publisher waiting for its whole budget
            if (down) {
                run("ip", "link", "set", "eth0", "up");
            }
        }
    }

    /** Diagnosis of a failed recovery: can a brand-new transport in this JVM reach the publisher (never fails the test)? */
    private static void probeWithANewBus(final String self, final String publisherIp) {
        List<Received<String>> probe = new CopyOnWriteArrayList<>();
        try (Bus fresh = Bus.builder().name("flap-probe").transport(RdmaTransport.NAME).transportProperty(RdmaTransportConfig.BIND, self)
                .transportProperty(RdmaTransportConfig.CM_PORT_BASE, String.valueOf(PORT + 1)).transportProperty(RdmaTransportConfig.CM_PORT_RANGE, "1")
                .transportProperty(AuthConfig.SECRET, "link-flap-test-secret-0123456789")
                .discovery(new StaticSeedDiscovery(Map.of(RdmaTransport.NAME, List.of(publisherIp + ":" + PORT)))).idleStrategy("backoff").build()) {
            fresh.subscribeReceived(TOPIC, SubscribeOptions.defaults()).subscribe(probe::add);
            boolean any = await(() -> !probe.isEmpty(), 40_000);
            System.err.println("---- a new bus in this JVM after the failed recovery: " + (any ? "received " + probe.size() : "received nothing in 40 s")
                    + "; counters " + fresh.stats().transportCounters());
        } catch (RuntimeException | InterruptedException e) {
            System.err.println("---- a new bus in this JVM after the failed recovery: " + e);
        }
    }

    private static void run(final String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).inheritIO().start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, String.join(" ", command) + " failed");
    }

    private static boolean await(final java.util.function.BooleanSupplier done, final long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(5); // interruptible: JUnit's timeout ends the test
        }
        return true;
    }

    /** What the guest's network and RDMA stack look like (for a failure's diagnosis; never fails the test). */
    private static void showStack(final String when) {
        System.err.println("---- " + when);
        for (String cmd : List.of("ip -4 addr show eth0", "ip neigh show dev eth0", "rdma link show",
                "sh -c 'for g in /sys/class/infiniband/*/ports/1/gids/[0-3]; do echo $g $(cat $g); done'", "rdma res show",
                "rdma res show cm_id", "rdma res show qp",
                "sh -c 'cd /sys/class/infiniband/rxe0/ports/1/hw_counters && grep . *'",
                "sh -c 'dmesg | tail -15'")) {
            try {
                Process p = new ProcessBuilder("sh", "-c", cmd).redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                p.waitFor(10, TimeUnit.SECONDS);
                System.err.println("$ " + cmd + "\n" + out.strip());
            } catch (IOException | InterruptedException e) {
                System.err.println("$ " + cmd + ": " + e);
            }
        }
    }
}
