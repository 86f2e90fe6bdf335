package io.rdmabus.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * The Aeron transport's counter descriptors (names kept: the CLI and the tests read counters by name) and their
 * documentation in tcp-fallback/README.md.
 */
class AeronCounterTest {
    @Test
    void everyAeronCounterHasAUniqueNameWriterDescriptionAndIsDocumented() throws Exception {
        final String readme = Files.readString(Path.of("README.md"));
        final Set<String> names = new HashSet<>();
        for (final AeronCounter d : AeronCounter.values()) {
            assertEquals(d.ordinal(), d.id(), d + ": id");
            assertTrue(names.add(d.counterName()), d + ": name used twice");
            assertFalse(d.description().isBlank(), d + ": no description");
            assertFalse(d.writer().isBlank(), d + ": no writer thread");
            assertEquals(d.source() == AeronCounter.Source.DRIVER, d.systemCounter() != null, d + ": a driver counter names its system counter");
            assertTrue(readme.contains("`" + d.counterName() + "`"), d.counterName() + " is in tcp-fallback/README.md");
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
