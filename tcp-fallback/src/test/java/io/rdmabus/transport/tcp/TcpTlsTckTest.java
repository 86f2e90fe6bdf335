package io.rdmabus.transport.tcp;

import java.util.HashMap;
import java.util.Map;

import io.rdmabus.tck.TckFixture;
import io.rdmabus.tck.TransportTck;

/** The transport TCK over TCP on loopback with mutual TLS and a bus secret (the secret's handshake runs inside TLS). */
class TcpTlsTckTest extends TransportTck {
    @Override
    protected TckFixture createFixture() {
        final Map<String, String> properties = new HashMap<>(TcpAuthTest.tls("bus", "bus"));
        properties.put(TcpTransportConfig.SECRET, "tck-bus-secret-0123456789abcdef");
        return new TcpTckFixture(properties);
    }
}
