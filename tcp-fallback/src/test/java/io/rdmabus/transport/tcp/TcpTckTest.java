package io.rdmabus.transport.tcp;

import java.util.Map;

import io.rdmabus.tck.TckFixture;
import io.rdmabus.tck.TransportTck;

/** The transport TCK over TCP on loopback, default settings. */
class TcpTckTest extends TransportTck {
    @Override
    protected TckFixture createFixture() {
        return new TcpTckFixture(Map.of());
    }
}
