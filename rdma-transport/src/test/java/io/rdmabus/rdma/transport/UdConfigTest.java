package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.BusConfigurationException;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The UD path's settings and the values derived from the bus identity (pure logic; the rxe behaviour is in UdRxeTest). */
class UdConfigTest {
    @Test
    void defaultsAreUnicastWithTheDefaultIdentity() {
        RdmaTransportConfig c = RdmaTransportConfig.parse(Map.of());
        assertEquals(UdConfig.Mode.UNICAST, c.ud().mode());
        assertEquals("rdma-bus", c.ud().domain());
        assertEquals(4096, c.ud().recvBuffers());
        assertEquals(1016, c.maxBestEffortFrameBytes());
        assertFalse(new RdmaTransport(c).capabilities().multicast());
        assertTrue(new RdmaTransport(RdmaTransportConfig.parse(Map.of(UdConfig.MODE, "multicast"))).capabilities().multicast());
        assertTrue(RdmaTransportConfig.knownProperties().keySet().containsAll(UdConfig.defaults().keySet()));
    }

    @Test
    void qkeyIsDerivedFromTheIdentityWithTheHighBitClear() {
        int a = RdmaTransportConfig.parse(Map.of(UdConfig.DOMAIN, "desk-a")).ud().qkey();
        int a2 = RdmaTransportConfig.parse(Map.of(UdConfig.DOMAIN, "desk-a")).ud().qkey();
        int b = RdmaTransportConfig.parse(Map.of(UdConfig.DOMAIN, "desk-b")).ud().qkey();
        assertEquals(a, a2, "deterministic");
        assertNotEquals(a, b, "another identity, another Q_Key");
        for (int i = 0; i < 1000; i++) {
            int k = RdmaTransportConfig.parse(Map.of(UdConfig.DOMAIN, "bus-" + i)).ud().qkey();
            assertTrue(k >= 0, "controlled Q_Key (high bit set) for bus-" + i);
            assertNotEquals(0x01234567, k, "rdma_cm's well-known Q_Key");
        }
    }

    @Test
    void withABusSecretTheQkeyDerivesFromItSoANodeWithoutItHasAnother() {
        UdConfig c = RdmaTransportConfig.parse(Map.of(UdConfig.DOMAIN, "desk-a")).ud();
        byte[] s1 = "a bus secret of sixteen bytes or more".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] s2 = "another bus secret, also long enough".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(c.qkey(), c.qkey(null), "no secret: the identity's Q_Key");
        assertEquals(c.qkey(s1), c.qkey(s1.clone()), "deterministic");
        assertNotEquals(c.qkey(), c.qkey(s1), "a node without the secret has another Q_Key");
        assertNotEquals(c.qkey(s1), c.qkey(s2), "another secret, another Q_Key");
        assertNotEquals(c.qkey(s1), RdmaTransportConfig.parse(Map.of(UdConfig.DOMAIN, "desk-b")).ud().qkey(s1), "another identity too");
        for (int i = 0; i < 1000; i++) {
            int k = c.qkey(("secret-number-" + i + "-padding").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            assertTrue(k >= 0, "controlled Q_Key (high bit set)");
            assertNotEquals(0x01234567, k, "rdma_cm's well-known Q_Key");
        }
    }

    @Test
    void groupsAreDeterministicAndInsideTheConfiguredRange() {
        UdConfig c = RdmaTransportConfig.parse(Map.of(UdConfig.GROUPS, "239.77.0.0/16")).ud();
        int base = UdConfig.ipv4("239.77.0.0");
        for (int i = 0; i < 200; i++) {
            int g = c.groupOf("topic-" + i);
            assertEquals(base, g & 0xFFFF0000, UdConfig.ipv4Text(g));
            assertEquals(g, c.groupOf("topic-" + i));
        }
        UdConfig other = RdmaTransportConfig.parse(Map.of(UdConfig.GROUPS, "239.77.0.0/16", UdConfig.DOMAIN, "other")).ud();
        int differ = 0;
        for (int i = 0; i < 50; i++) {
            differ += c.groupOf("t" + i) != other.groupOf("t" + i) ? 1 : 0;
        }
        assertTrue(differ >= 45, "another identity maps topics to other groups: " + differ + " of 50");
        UdConfig one = RdmaTransportConfig.parse(Map.of(UdConfig.GROUPS, "239.1.2.3/32")).ud();
        assertEquals("239.1.2.3", UdConfig.ipv4Text(one.groupOf("a")));
        assertEquals(one.groupOf("a"), one.groupOf("b"));
        assertEquals("239.1.2.0", UdConfig.ipv4Text(RdmaTransportConfig.parse(Map.of(UdConfig.GROUPS, "239.1.2.77/24")).ud().groupBase()));
    }

    @Test
    void badValuesFailFastNamingTheKey() {
        for (Map<String, String> bad : List.of(Map.of(UdConfig.MODE, "broadcast"), Map.of(UdConfig.GROUPS, "10.0.0.0/8"),
            Map.of(UdConfig.GROUPS, "239.1.1.1"), Map.of(UdConfig.GROUPS, "239.1.1.1/4"), Map.of(UdConfig.RECV_BUFFERS, "1"),
            Map.of(UdConfig.RECV_BUFFERS, "x"), Map.of(UdConfig.DOMAIN, " "))) {
            BusConfigurationException e = assertThrows(BusConfigurationException.class, () -> RdmaTransportConfig.parse(bad), bad.toString());
            String key = bad.keySet().iterator().next();
            assertTrue(e.getMessage().contains(key), e.getMessage());
        }
    }

    @Test
    void gapRecoveryIsOffByDefaultAndBadValuesFailNamingTheKey() {
        UdConfig d = RdmaTransportConfig.parse(Map.of()).ud();
        assertEquals(0, d.recoveryFrames());
        assertEquals(50, d.recoveryMs());
        assertFalse(d.recovery());
        UdConfig on = RdmaTransportConfig.parse(Map.of(UdConfig.RECOVERY_FRAMES, "256", UdConfig.RECOVERY_MS, "200")).ud();
        assertTrue(on.recovery());
        assertEquals(256, on.recoveryFrames());
        assertEquals(200, on.recoveryMs());
        for (String bad : List.of("-1", "1025", "many")) {
            BusConfigurationException e = assertThrows(BusConfigurationException.class,
                () -> RdmaTransportConfig.parse(Map.of(UdConfig.RECOVERY_FRAMES, bad)));
            assertTrue(e.getMessage().contains(UdConfig.RECOVERY_FRAMES) && e.getMessage().contains(bad), e.getMessage());
        }
        for (String bad : List.of("0", "10001", "soon")) {
            BusConfigurationException e = assertThrows(BusConfigurationException.class,
                () -> RdmaTransportConfig.parse(Map.of(UdConfig.RECOVERY_MS, bad)));
            assertTrue(e.getMessage().contains(UdConfig.RECOVERY_MS) && e.getMessage().contains(bad), e.getMessage());
        }
        BusConfigurationException rc = assertThrows(BusConfigurationException.class,
            () -> RdmaTransportConfig.parse(Map.of(UdConfig.RECOVERY_FRAMES, "64", UdConfig.MODE, "rc")));
        assertTrue(rc.getMessage().contains(UdConfig.RECOVERY_FRAMES) && rc.getMessage().contains(UdConfig.MODE), rc.getMessage());
        assertTrue(RdmaTransportConfig.knownProperties().containsKey(UdConfig.RECOVERY_FRAMES));
        assertTrue(RdmaTransportConfig.knownProperties().containsKey(UdConfig.RECOVERY_MS));
    }

    @Test
    void gapRecoveryCanBeLimitedToNamedTopics() {
        UdConfig all = RdmaTransportConfig.parse(Map.of(UdConfig.RECOVERY_FRAMES, "64")).ud();
        assertTrue(all.recovers("quotes") && all.recovers("trades"), "no list: every BEST_EFFORT topic");
        UdConfig some = RdmaTransportConfig.parse(Map.of(UdConfig.RECOVERY_FRAMES, "64", UdConfig.RECOVERY_TOPICS, " quotes, md.book-1 ,")).ud();
        assertTrue(some.recovers("quotes") && some.recovers("md.book-1"), "listed topics");
        assertFalse(some.recovers("trades"), "a topic not listed");
        assertFalse(RdmaTransportConfig.parse(Map.of()).ud().recovers("quotes"), "recovery off");
        BusConfigurationException badName = assertThrows(BusConfigurationException.class,
            () -> RdmaTransportConfig.parse(Map.of(UdConfig.RECOVERY_FRAMES, "64", UdConfig.RECOVERY_TOPICS, "quotes,bad name")));
        assertTrue(badName.getMessage().contains(UdConfig.RECOVERY_TOPICS) && badName.getMessage().contains("'bad name'"), badName.getMessage());
        BusConfigurationException off = assertThrows(BusConfigurationException.class,
            () -> RdmaTransportConfig.parse(Map.of(UdConfig.RECOVERY_TOPICS, "quotes")));
        assertTrue(off.getMessage().contains(UdConfig.RECOVERY_TOPICS) && off.getMessage().contains(UdConfig.RECOVERY_FRAMES), off.getMessage());
        assertTrue(RdmaTransportConfig.knownProperties().containsKey(UdConfig.RECOVERY_TOPICS));
    }
}
