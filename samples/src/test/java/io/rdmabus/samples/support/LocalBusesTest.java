package io.rdmabus.samples.support;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LocalBusesTest {
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
