package io.rdmabus.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

class AeronTestSupportTest {
    @Test
    void noUdpPortIsHandedOutTwice() {
        final Set<Integer> seen = new HashSet<>();
        final List<Integer> repeated = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            final int port = AeronTestSupport.freeUdpPort();
            if (!seen.add(port)) {
                repeated.add(port);
            }
        }
        assertEquals(List.of(), repeated, "ports handed out more than once in 200 calls");
    }
}
