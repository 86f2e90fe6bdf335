package io.rdmabus.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import io.rdmabus.tck.CounterDescriptors;

import org.junit.jupiter.api.Test;

/**
 * The Aeron transport's counter descriptors (names kept: the CLI and the tests read counters by name) and their
 * documentation in tcp-fallback/README.md.
 */
class AeronCounterTest {
    @Test
    void everyAeronCounterHasAUniqueNameAndIsDocumentedAndEachDriverCounterNamesItsSystemCounter() throws Exception {
        CounterDescriptors.assertUniqueAndDocumented(AeronCounter.values(), Path.of("README.md"), "`%s`");
        for (final AeronCounter d : AeronCounter.values()) {
            assertEquals(d.source() == AeronCounter.Source.DRIVER, d.systemCounter() != null, d + ": a driver counter names its system counter");
        }
    }

    @Test
    void anUnstartedTransportReportsEveryCounterInOrderAtZeroAndNoConnections() {
        final AeronTransport t = (AeronTransport) new AeronIpcTransportFactory().create(Map.of());
        final Map<String, Long> counters = t.counters();
        assertEquals(Arrays.stream(AeronCounter.values()).map(AeronCounter::counterName).toList(), List.copyOf(counters.keySet()));
        counters.values().forEach(v -> assertEquals(0L, v));
        assertEquals(List.of(), t.connections());
    }
}
