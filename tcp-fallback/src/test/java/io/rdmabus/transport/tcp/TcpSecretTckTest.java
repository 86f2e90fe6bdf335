package io.rdmabus.transport.tcp;

import java.util.Map;

import io.rdmabus.tck.TckFixture;
import io.rdmabus.tck.TransportTck;

/** The transport TCK over TCP on loopback with a bus secret: every connection authenticates before any frame. */
class TcpSecretTckTest extends TransportTck {
    @Override
    protected TckFixture createFixture() {
        return new TcpTckFixture(Map.of(TcpTransportConfig.SECRET, "tck-bus-secret-0123456789abcdef"));
    }
}
