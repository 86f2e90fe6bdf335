package io.rdmabus.samples.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.aeron.CommonContext;
import io.rdmabus.Bus;
import io.rdmabus.Delivery;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import reactor.core.publisher.Flux;

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

    /** aeron-udp: the group's buses share one media driver, not one embedded driver each, and reach each other over UDP. */
    @Test
    void aeronUdpBusesShareOneMediaDriverAndReachEachOther() throws Exception {
        final String busName = "local-udp-" + ProcessHandle.current().pid();
        try (LocalBuses group = LocalBuses.create("aeron-udp", 2)) {
            final Bus pub = group.newBus(busName + "-pub");
            final Bus sub = group.newBus(busName + "-sub");
            assertTrue(new File(group.aeronDirectory(), "cnc.dat").isFile(), "the group's driver runs in " + group.aeronDirectory());
            final File aeronDir = new File(CommonContext.getAeronDirectoryName());
            final String[] ownDrivers = aeronDir.getParentFile().list((dir, name) -> name.startsWith(aeronDir.getName() + "-rdma-bus-" + busName));
            assertEquals(List.of(), ownDrivers == null ? List.of() : List.of(ownDrivers), "embedded drivers of the group's buses");
            final Topic<String> topic = Topic.of("local-udp", Codecs.utf8(), Delivery.RELIABLE);
            final var received = sub.subscribe(topic).take(3).collectList().toFuture();
            pub.publish(topic, Flux.just("a", "b", "c")).block(Duration.ofSeconds(20));
            assertEquals(List.of("a", "b", "c"), received.get(20, TimeUnit.SECONDS));
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
