package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** The counter descriptors: names kept (the CLI, the soak checks and the rxe tests read counters by name), ids unique. */
class RdmaCounterTest {
    @Test
    void everyCounterHasAUniqueNameIdAndDescription() {
        Set<String> names = new HashSet<>();
        for (RdmaCounter d : RdmaCounter.values()) {
            assertEquals(d.ordinal(), d.id(), d + ": id");
            assertTrue(names.add(d.counterName()), d + ": name used twice: " + d.counterName());
            assertFalse(d.description().isBlank(), d + ": no description");
            assertFalse(d.writer().isBlank(), d + ": no writer thread");
        }
        assertEquals(39, names.size(), "counters described");
    }

    @Test
    void anUnstartedTransportReportsItsAlwaysCountersInOrderAtZero() {
        Map<String, Long> counters = new RdmaTransport(RdmaTransportConfig.parse(Map.of())).counters();
        assertEquals(List.of("malformedMessages", "refusedPeers", "pollerProxyFails", "cmProxyFails", "pollerCommandsDiscarded",
                "cmCommandsDiscarded"), List.copyOf(counters.keySet()));
        counters.values().forEach(v -> assertEquals(0L, v));
    }

    @Test
    void everyConnectionCounterIsDescribedHereAndInTheDocs() throws Exception {
        String doc = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "rdma-transport.md"));
        Set<String> names = new HashSet<>();
        for (RdmaConnectionCounter d : RdmaConnectionCounter.values()) {
            assertEquals(d.ordinal(), d.id(), d + ": id");
            assertTrue(names.add(d.counterName()), d + ": name used twice: " + d.counterName());
            assertFalse(d.description().isBlank(), d + ": no description");
            assertFalse(d.writer().isBlank(), d + ": no writer thread");
            assertTrue(doc.contains("| `" + d.counterName() + "` |"), d.counterName() + " is in docs/rdma-transport.md's connection table");
        }
        assertEquals(List.of(), new RdmaTransport(RdmaTransportConfig.parse(Map.of())).connections(), "no connections before start");
    }

    @Test
    void aSingleWriterIncrementAndAnAtomicOneAddUp() {
        TransportCounters c = new TransportCounters();
        c.increment(RdmaCounter.PEERS_LOST);
        c.increment(RdmaCounter.PEERS_LOST);
        c.incrementAtomic(RdmaCounter.REFUSED_PEERS);
        c.set(RdmaCounter.DISCOVERED_PEERS, 7);
        assertEquals(2, c.get(RdmaCounter.PEERS_LOST));
        assertEquals(1, c.get(RdmaCounter.REFUSED_PEERS));
        assertEquals(7, c.get(RdmaCounter.DISCOVERED_PEERS));
        assertEquals(0, c.get(RdmaCounter.CM_STALLS));
    }
}
