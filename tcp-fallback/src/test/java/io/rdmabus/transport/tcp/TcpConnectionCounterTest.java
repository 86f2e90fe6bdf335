package io.rdmabus.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** The TCP transport's per-connection counter descriptors (names kept: the CLI and tests read them) and their documentation. */
class TcpConnectionCounterTest {
    @Test
    void everyConnectionCounterHasAUniqueNameWriterDescriptionAndIsDocumented() throws Exception {
        final String readme = Files.readString(Path.of("README.md"));
        final Set<String> names = new HashSet<>();
        for (final TcpConnectionCounter d : TcpConnectionCounter.values()) {
            assertEquals(d.ordinal(), d.id(), d + ": id");
            assertTrue(names.add(d.counterName()), d + ": name used twice");
            assertFalse(d.description().isBlank(), d + ": no description");
            assertFalse(d.writer().isBlank(), d + ": no writer thread");
            assertTrue(readme.contains("`" + d.counterName() + "`"), d.counterName() + " is in tcp-fallback/README.md");
        }
    }
}
