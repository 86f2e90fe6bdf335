package io.rdmabus.samples.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.rdmabus.Bus;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LocalBusesTest {
    @Test
    void aBusEndpointStaysTakenUntilItsBusIsBuilt() throws Exception {
        try (LocalBuses group = LocalBuses.create("tcp", 2)) {
            final String second = group.endpoints().get(1);
            final int port = Integer.parseInt(second.substring(second.lastIndexOf(':') + 1));
            assertThrows(BindException.class, () -> new ServerSocket(port, 1, InetAddress.getLoopbackAddress()).close(),
                "another socket could bind the second bus's endpoint before that bus exists");
            group.newBus("first");
            final Bus bus = group.newBus("second");
            assertEquals("tcp", bus.transportName());
            assertThrows(BindException.class, () -> new ServerSocket(port, 1, InetAddress.getLoopbackAddress()).close(),
                "the second bus listens on its endpoint");
        }
    }

    /**
     * 200 ports: probed and closed one at a time, Linux handed one port out twice in most groups of this size (1-3
     * repeats per group of 200 on the build box), and two buses of a group then tried to bind the same port.
     */
    @ParameterizedTest(name = "udp={0}")
    @ValueSource(booleans = {false, true})
    void theEndpointsOfAGroupAreAllDifferent(final boolean udp) {
        final int[] ports = LocalBuses.freePorts(200, udp);
        final Set<Integer> seen = new HashSet<>();
        final List<Integer> repeated = Arrays.stream(ports).boxed().filter(port -> !seen.add(port)).toList();
        assertEquals(List.of(), repeated, "ports given out more than once among " + ports.length);
    }
}
