package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.BusConfigurationException;

import java.util.Map;

import org.junit.jupiter.api.Test;

/** {@code rdma.discovery*}: defaults, parsing, the derived control group and the errors (pure logic; the rxe behaviour is in DiscoveryRxeTest). */
class DiscoveryConfigTest {
    @Test
    void defaultIsSeedsOnlyWithAOneSecondInterval() {
        RdmaTransportConfig c = RdmaTransportConfig.parse(Map.of());
        assertEquals(DiscoveryConfig.Mode.SEEDS, c.discovery().mode());
        assertFalse(c.discovery().multicast());
        assertEquals(1000, c.discovery().intervalMs());
        assertEquals(0, c.discovery().group(), "derived");
        assertTrue(RdmaTransportConfig.knownProperties().keySet().containsAll(DiscoveryConfig.defaults().keySet()));
    }

    @Test
    void multicastWithAnIntervalAndUdModes() {
        RdmaTransportConfig c = RdmaTransportConfig.parse(Map.of(DiscoveryConfig.MODE, " Multicast ", DiscoveryConfig.INTERVAL_MS, "250"));
        assertTrue(c.discovery().multicast());
        assertEquals(250, c.discovery().intervalMs());
        assertTrue(RdmaTransportConfig.parse(Map.of(DiscoveryConfig.MODE, "multicast", UdConfig.MODE, "multicast")).discovery().multicast());
        assertEquals(100, RdmaTransportConfig.parse(Map.of(DiscoveryConfig.INTERVAL_MS, "100")).discovery().intervalMs());
        assertEquals(60_000, RdmaTransportConfig.parse(Map.of(DiscoveryConfig.INTERVAL_MS, "60000")).discovery().intervalMs());
    }

    @Test
    void theControlGroupDerivesFromTheIdentityInsideTheRange() {
        UdConfig a = RdmaTransportConfig.parse(Map.of(UdConfig.DOMAIN, "desk-a")).ud();
        UdConfig a2 = RdmaTransportConfig.parse(Map.of(UdConfig.DOMAIN, "desk-a")).ud();
        UdConfig b = RdmaTransportConfig.parse(Map.of(UdConfig.DOMAIN, "desk-b")).ud();
        DiscoveryConfig d = RdmaTransportConfig.parse(Map.of()).discovery();
        assertEquals(d.controlGroup(a), d.controlGroup(a2), "every node of a bus computes the same group");
        assertNotEquals(d.controlGroup(a), d.controlGroup(b), "another identity, (most likely) another group");
        int base = UdConfig.ipv4("239.192.0.0");
        for (int i = 0; i < 200; i++) {
            int g = d.controlGroup(RdmaTransportConfig.parse(Map.of(UdConfig.DOMAIN, "bus-" + i)).ud());
            assertEquals(base, g & 0xFFFF0000, "inside rdma.ud.groups: " + UdConfig.ipv4Text(g));
        }
        UdConfig one = RdmaTransportConfig.parse(Map.of(UdConfig.GROUPS, "239.77.9.9/32")).ud();
        assertEquals(UdConfig.ipv4("239.77.9.9"), d.controlGroup(one), "/32: the one group");
        DiscoveryConfig explicit = RdmaTransportConfig.parse(Map.of(DiscoveryConfig.GROUP, "239.1.2.3")).discovery();
        assertEquals(UdConfig.ipv4("239.1.2.3"), explicit.controlGroup(a), "rdma.discovery.group wins");
    }

    @Test
    void badValuesFailNamingThePropertyAndWhatToChange() {
        assertBad(Map.of(DiscoveryConfig.MODE, "dns"), DiscoveryConfig.MODE, "seeds");
        assertBad(Map.of(DiscoveryConfig.INTERVAL_MS, "99"), DiscoveryConfig.INTERVAL_MS, "100..60000");
        assertBad(Map.of(DiscoveryConfig.INTERVAL_MS, "60001"), DiscoveryConfig.INTERVAL_MS, "100..60000");
        assertBad(Map.of(DiscoveryConfig.INTERVAL_MS, "1s"), DiscoveryConfig.INTERVAL_MS, "integer");
        assertBad(Map.of(DiscoveryConfig.GROUP, "10.0.0.1"), DiscoveryConfig.GROUP, "multicast");
        assertBad(Map.of(DiscoveryConfig.GROUP, "239.1.2"), DiscoveryConfig.GROUP, "IPv4");
        BusConfigurationException rc = assertBad(Map.of(DiscoveryConfig.MODE, "multicast", UdConfig.MODE, "rc"), DiscoveryConfig.MODE, UdConfig.MODE);
        assertTrue(rc.getMessage().contains("unicast"), rc.getMessage());
        // rc mode with seeds stays fine
        assertEquals(UdConfig.Mode.RC, RdmaTransportConfig.parse(Map.of(UdConfig.MODE, "rc")).ud().mode());
        BusConfigurationException unknown = assertThrows(BusConfigurationException.class,
                () -> RdmaTransportConfig.parse(Map.of("rdma.discovery.seeds", "x")));
        assertTrue(unknown.getMessage().contains(DiscoveryConfig.INTERVAL_MS), "lists the known keys: " + unknown.getMessage());
    }

    private static BusConfigurationException assertBad(final Map<String, String> p, final String key, final String hint) {
        BusConfigurationException e = assertThrows(BusConfigurationException.class, () -> RdmaTransportConfig.parse(p), p.toString());
        assertTrue(e.getMessage().contains(key) && e.getMessage().contains(hint), e.getMessage());
        return e;
    }
}
