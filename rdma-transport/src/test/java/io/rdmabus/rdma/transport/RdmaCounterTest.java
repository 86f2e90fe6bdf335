package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import io.rdmabus.tck.CounterDescriptors;

import org.junit.jupiter.api.Test;

/** The counter descriptors: names kept (the CLI, the soak checks and the rxe tests read counters by name), ids unique. */
class RdmaCounterTest {
    @Test
    void everyCounterHasAUniqueNameAndIsDocumented() throws Exception {
        CounterDescriptors.assertUniqueAndDocumented(RdmaCounter.values(), Path.of("..", "docs", "rdma-transport.md"), "`%s`");
    }

    @Test
    void anUnstartedTransportReportsItsAlwaysCountersInOrderAtZero() {
        Map<String, Long> counters = new RdmaTransport(RdmaTransportConfig.parse(Map.of())).counters();
        assertEquals(List.of("malformedMessages", "refusedPeers", "pollerProxyFails", "cmProxyFails", "pollerCommandsDiscarded",
                "cmCommandsDiscarded"), List.copyOf(counters.keySet()));
        counters.values().forEach(v -> assertEquals(0L, v));
    }

    @Test
    void everyConnectionCounterIsDescribedInTheDocsTable() throws Exception {
        CounterDescriptors.assertUniqueAndDocumented(RdmaConnectionCounter.values(), Path.of("..", "docs", "rdma-transport.md"), "| `%s` |");
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
