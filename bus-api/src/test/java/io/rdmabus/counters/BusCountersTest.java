package io.rdmabus.counters;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.rdmabus.BusConfigurationException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The counters file's writer and reader over one file (the cross-process case is in the samples' CountersCrossProcessTest). */
class BusCountersTest {
    @TempDir
    Path dir;

    @Test
    void aReaderSeesTheHeaderScopesAndValuesAndTheFileGoesAwayOnClose() throws Exception {
        final AtomicLong delivered = new AtomicLong(41);
        final Path file;
        try (BusCounters counters = BusCounters.create(dir.resolve("sub"), "bus one", "tcp")) {
            file = counters.file();
            assertEquals(dir.resolve("sub").resolve("bus_one-" + ProcessHandle.current().pid() + ".counters"), file);
            assertEquals("rw-r--r--", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
            assertEquals("rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent())));
            counters.addScope(CountersFile.KIND_SUBSCRIPTION, "subscription news", List.of("messagesDelivered", "ringFree"), v -> {
                v[0] = delivered.get();
                v[1] = 7;
            });
            final BusCounters.Scope publication = counters.addScope(CountersFile.KIND_PUBLICATION, "publication news", List.of("messagesPublished"),
                v -> v[0] = 3);
            counters.transportCounters(() -> Map.of("refusedPeers", 2L));
            delivered.incrementAndGet();
            assertTrue(counters.update());
            try (CountersFileReader reader = CountersFileReader.open(file)) {
                assertEquals("bus one", reader.busName());
                assertEquals("tcp", reader.transportName());
                assertEquals(ProcessHandle.current().pid(), reader.pid());
                assertNull(reader.staleReason(System.currentTimeMillis()));
                assertTrue(reader.staleReason(System.currentTimeMillis() + CountersFile.STALE_AFTER_MS + 1_000).startsWith("no heartbeat for "));
                assertEquals(List.of(
                    new CountersFileReader.Counter(CountersFile.KIND_SUBSCRIPTION, 1, "subscription news", "messagesDelivered", 42),
                    new CountersFileReader.Counter(CountersFile.KIND_SUBSCRIPTION, 1, "subscription news", "ringFree", 7),
                    new CountersFileReader.Counter(CountersFile.KIND_PUBLICATION, 2, "publication news", "messagesPublished", 3),
                    new CountersFileReader.Counter(CountersFile.KIND_TRANSPORT, 0, "transport", "refusedPeers", 2)), reader.counters());
                publication.close();
                assertEquals(3, reader.counters().size(), "a closed scope's counters are freed: " + reader.counters());
            }
        }
        assertFalse(Files.exists(file), "deleted on close");
    }

    @Test
    void aConnectionHasCountersWhileItsTransportListsItAndTheyAreFreedWhenItCloses() throws Exception {
        final List<io.rdmabus.ConnectionStats> live = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (BusCounters counters = BusCounters.create(dir, "bus", "tcp")) {
            counters.transportConnections(() -> List.copyOf(live));
            final Map<String, Long> first = new java.util.LinkedHashMap<>();
            first.put("messagesIn", 5L);
            first.put("bytesIn", 50L);
            live.add(new io.rdmabus.ConnectionStats(7, "10.0.0.2:4000 (b)", first));
            live.add(new io.rdmabus.ConnectionStats(8, "10.0.0.3:4000 (c)", Map.of("messagesIn", 1L)));
            assertTrue(counters.update());
            try (CountersFileReader reader = CountersFileReader.open(counters.file())) {
                final List<CountersFileReader.Counter> all = reader.counters();
                assertEquals(List.of(
                    new CountersFileReader.Counter(CountersFile.KIND_CONNECTION, 1, "connection 10.0.0.2:4000 (b)", "messagesIn", 5),
                    new CountersFileReader.Counter(CountersFile.KIND_CONNECTION, 1, "connection 10.0.0.2:4000 (b)", "bytesIn", 50),
                    new CountersFileReader.Counter(CountersFile.KIND_CONNECTION, 2, "connection 10.0.0.3:4000 (c)", "messagesIn", 1)), all);
                first.put("messagesIn", 6L);
                live.set(0, new io.rdmabus.ConnectionStats(7, "10.0.0.2:4000 (b)", first));
                live.remove(1); // connection 8 closed
                assertTrue(counters.update());
                assertEquals(List.of(
                    new CountersFileReader.Counter(CountersFile.KIND_CONNECTION, 1, "connection 10.0.0.2:4000 (b)", "messagesIn", 6),
                    new CountersFileReader.Counter(CountersFile.KIND_CONNECTION, 1, "connection 10.0.0.2:4000 (b)", "bytesIn", 50)),
                    reader.counters(), "the closed connection's counter is freed");
                live.add(new io.rdmabus.ConnectionStats(9, "10.0.0.3:4000 (c)", Map.of("messagesIn", 0L)));
                live.remove(0);
                assertTrue(counters.update());
                assertEquals(List.of(new CountersFileReader.Counter(CountersFile.KIND_CONNECTION, 3, "connection 10.0.0.3:4000 (c)", "messagesIn", 0)),
                    reader.counters(), "a reconnect is a new scope; the old one's counters are gone");
            }
        }
    }

    @Test
    void theErrorLogKeepsDistinctErrorsWithTheirCounts() throws Exception {
        try (BusCounters counters = BusCounters.create(dir, "errors", "aeron-ipc")) {
            final IllegalStateException same = new IllegalStateException("peer went away");
            counters.recordError(same);
            counters.recordError(same);
            counters.recordError(new IllegalArgumentException("bad frame"));
            try (CountersFileReader reader = CountersFileReader.open(counters.file())) {
                final List<String> seen = new ArrayList<>();
                assertEquals(2, reader.readErrors((count, first, last, text) -> seen.add(count + " " + text.lines().findFirst().orElse(""))));
                assertEquals(List.of("2 java.lang.IllegalStateException: peer went away", "1 java.lang.IllegalArgumentException: bad frame"), seen);
            }
        }
    }

    @Test
    void anUnusableDirectoryFailsNamingTheSetting() throws Exception {
        final Path notADir = Files.writeString(dir.resolve("plain-file"), "x");
        final BusConfigurationException ex = assertThrows(BusConfigurationException.class, () -> BusCounters.create(notADir, "b", "tcp"));
        assertTrue(ex.getMessage().startsWith("countersDir '" + notADir + "' (builder countersDir or -Drdmabus.counters.dir): cannot create"),
            ex.getMessage());
    }

    @Test
    void theDirectorySetting() {
        assertNull(BusCounters.directory("off"));
        assertEquals(Path.of("/x/y"), BusCounters.directory("/x/y"));
        final String property = System.getProperty(BusCounters.DIR_PROPERTY); // the build sets it: test buses write under target/
        assertEquals(property == null ? CountersFile.defaultDirectory() : Path.of(property), BusCounters.directory(null));
        assertTrue(CountersFile.defaultDirectory().getFileName().toString().startsWith("rdma-bus-"));
    }
}
