package io.rdmabus.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import io.rdmabus.BusConfigurationException;
import io.rdmabus.spi.TransportFactory;
import io.rdmabus.transport.aeron.AeronIpcTransportFactory;
import io.rdmabus.transport.aeron.AeronMedium;
import io.rdmabus.transport.aeron.AeronTransportConfig;
import io.rdmabus.transport.aeron.AeronUdpTransportFactory;

import org.junit.jupiter.api.Test;

/** What the tcp and Aeron factories declare matches what their configs accept. */
class TransportPropertiesTest {
    private static Map<String, String> declaredDefaults(final TransportFactory factory) {
        final Map<String, String> m = new HashMap<>();
        factory.properties().values().stream().filter(d -> !d.defaultValue().isEmpty()).forEach(d -> m.put(d.key(), d.defaultValue()));
        return m;
    }

    @Test
    void tcpDeclaresEveryKnownKeyWithTheParsersDefault() {
        final TransportFactory tcp = new TcpTransportFactory();
        assertEquals(Set.copyOf(TcpTransportConfig.KNOWN_KEYS), tcp.properties().keySet());
        tcp.properties().values().forEach(d -> assertNotEquals("(not described)", d.description(), d.key()));
        assertEquals(TcpTransportConfig.defaults(), TcpTransportConfig.from(declaredDefaults(tcp)));
        assertEquals("tcp.", tcp.propertyPrefix());
    }

    @Test
    void anIoSpinOutsideItsRangeIsRefusedNamingTheKey() {
        assertEquals(0, TcpTransportConfig.from(Map.of(TcpTransportConfig.IO_SPIN_US, "0")).ioSpinUs());
        assertEquals(50, TcpTransportConfig.defaults().ioSpinUs());
        for (final String bad : new String[] {"-1", "10001"}) {
            final BusConfigurationException ex = assertThrows(BusConfigurationException.class,
                () -> TcpTransportConfig.from(Map.of(TcpTransportConfig.IO_SPIN_US, bad)));
            assertEquals("tcp.io.spin.us=" + bad + " is out of range 0..10000", ex.getMessage());
        }
    }

    @Test
    void aeronDeclaresItsKeysPerMediumUnderTheAeronPrefix() {
        final TransportFactory udp = new AeronUdpTransportFactory();
        final TransportFactory ipc = new AeronIpcTransportFactory();
        assertEquals(Set.of("aeron.dir", "driver.threading", "channel", "endpoint", "multicast.group", "interface", "stream.id.base", "mtu",
            "term.length"), udp.properties().keySet());
        assertFalse(ipc.properties().containsKey("endpoint"), "aeron-ipc refuses the UDP keys");
        for (final AeronMedium medium : AeronMedium.values()) {
            final TransportFactory f = medium == AeronMedium.UDP ? udp : ipc;
            assertEquals("aeron.", f.propertyPrefix());
            f.properties().values().forEach(d -> {
                assertNotEquals("(not described)", d.description(), d.key());
                assertNull(d.defaultValue().isEmpty() ? null : d.check(d.defaultValue()), d.key());
            });
            // the declared defaults are the parser's: giving them explicitly changes nothing
            assertEquals(AeronTransportConfig.parse(medium, Map.of()), AeronTransportConfig.parse(medium, declaredDefaults(f)));
        }
    }
}
