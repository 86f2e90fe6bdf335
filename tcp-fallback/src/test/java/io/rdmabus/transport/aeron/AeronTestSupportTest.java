package io.rdmabus.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

class AeronTestSupportTest {
    @Test
    void noUdpPortIsHandedOutTwiceNorFromTheEphemeralRange() {
        final int[] ephemeral = AeronTestSupport.ephemeralRange();
        final Set<Integer> seen = new HashSet<>();
        final List<Integer> repeated = new ArrayList<>();
        final List<Integer> ephemeralPorts = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            final int port = AeronTestSupport.freeUdpPort();
            if (!seen.add(port)) {
                repeated.add(port);
            }
            if (port >= ephemeral[0] && port <= ephemeral[1]) {
                ephemeralPorts.add(port);
            }
        }
        assertEquals(List.of(), repeated, "ports handed out more than once in 200 calls");
        assertEquals(List.of(), ephemeralPorts, "ports handed out inside the ephemeral range " + ephemeral[0] + "-" + ephemeral[1]);
    }

    @Test
    void theWindowIsBelowTheEphemeralRangeOrElseAboveIt() {
        assertArrayEquals(new int[] {32_768 - AeronTestSupport.WINDOW, 32_767}, AeronTestSupport.window(new int[] {32_768, 60_999}));
        assertArrayEquals(new int[] {50_001, 50_000 + AeronTestSupport.WINDOW}, AeronTestSupport.window(new int[] {2_000, 50_000}));
        assertThrows(IllegalStateException.class, () -> AeronTestSupport.window(new int[] {1_024, 65_000}));
    }
}
