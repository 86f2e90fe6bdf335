package io.rdmabus.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import io.rdmabus.BusConfigurationException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BusSecretTest {
    private static final String SECRET = "0123456789abcdef-secret";

    @Test
    void unsetNoneAndASecretUnderTheGivenPrefix() {
        final BusSecret unset = BusSecret.parse("tcp", Map.of("rdma.secret", SECRET));
        assertTrue(unset.unset(), "another prefix's key is not read");
        assertFalse(unset.enabled());
        assertEquals("unset", unset.toString());

        final BusSecret none = BusSecret.parse("tcp", Map.of("tcp.secret", "none"));
        assertFalse(none.enabled());
        assertFalse(none.unset(), "none is an explicit choice: no warning");
        assertEquals("none", none.toString());

        final BusSecret set = BusSecret.parse("tcp", Map.of("tcp.secret", SECRET));
        assertTrue(set.enabled());
        assertArrayEquals(SECRET.getBytes(StandardCharsets.UTF_8), set.key());
        assertEquals("secret(23 bytes)", set.toString(), "the bytes are never in toString");
        assertEquals(List.of("tcp.secret", "tcp.secret.file"), BusSecret.keys("tcp"));
        assertEquals("tcp.secret.file", set.secretFileKey());
        assertEquals(set, BusSecret.parse("tcp", Map.of("tcp.secret", SECRET)));
        assertNotEquals(set, BusSecret.parse("rdma", Map.of("rdma.secret", SECRET)));
        assertThrows(IllegalStateException.class, unset::key);
    }

    @Test
    void aFileDropsOneTrailingNewlineAndEqualsTheSameInlineSecret(@TempDir final Path dir) throws Exception {
        final Path file = dir.resolve("bus.secret");
        Files.writeString(file, SECRET + "\n");
        final BusSecret fromFile = BusSecret.parse("rdma", Map.of("rdma.secret.file", " " + file + " "));
        assertEquals(BusSecret.parse("rdma", Map.of("rdma.secret", SECRET)), fromFile);
    }

    @Test
    void errorsNameTheKey(@TempDir final Path dir) throws Exception {
        final BusConfigurationException both = assertThrows(BusConfigurationException.class,
            () -> BusSecret.parse("tcp", Map.of("tcp.secret", SECRET, "tcp.secret.file", "/x")));
        assertTrue(both.getMessage().contains("tcp.secret and tcp.secret.file"), both.getMessage());

        final BusConfigurationException shortOne = assertThrows(BusConfigurationException.class,
            () -> BusSecret.parse("tcp", Map.of("tcp.secret", "fifteen-bytes!!")));
        assertTrue(shortOne.getMessage().contains("tcp.secret has 15 bytes") && shortOne.getMessage().contains("at least 16")
            && shortOne.getMessage().contains("tcp.secret=none"), shortOne.getMessage());

        final Path missing = dir.resolve("absent");
        final BusConfigurationException unreadable = assertThrows(BusConfigurationException.class,
            () -> BusSecret.parse("tcp", Map.of("tcp.secret.file", missing.toString())));
        assertTrue(unreadable.getMessage().contains("tcp.secret.file='" + missing + "'"), unreadable.getMessage());

        final Path shortFile = dir.resolve("short");
        Files.writeString(shortFile, "0123456789abcde\n"); // 16 bytes with the newline, 15 without
        final BusConfigurationException shortInFile = assertThrows(BusConfigurationException.class,
            () -> BusSecret.parse("tcp", Map.of("tcp.secret.file", shortFile.toString())));
        assertTrue(shortInFile.getMessage().contains("tcp.secret.file '" + shortFile + "' has 15 bytes"), shortInFile.getMessage());
    }

    @Test
    void theMacDependsOnTheSecretAndEveryPart() {
        final BusSecret a = BusSecret.parse("tcp", Map.of("tcp.secret", SECRET));
        final BusSecret b = BusSecret.parse("tcp", Map.of("tcp.secret", SECRET + "x"));
        final byte[] one = {1};
        final byte[] two = {2};
        final byte[] mac = a.hmac(one, two);
        assertEquals(32, mac.length);
        assertTrue(BusSecret.matches(mac, a.hmac(one, two)));
        assertFalse(BusSecret.matches(mac, b.hmac(one, two)), "another secret");
        assertFalse(BusSecret.matches(mac, a.hmac(two, one)), "another order");
        assertFalse(BusSecret.matches(mac, null));
        assertThrows(IllegalStateException.class, () -> BusSecret.parse("tcp", Map.of()).hmac(one));
    }
}
