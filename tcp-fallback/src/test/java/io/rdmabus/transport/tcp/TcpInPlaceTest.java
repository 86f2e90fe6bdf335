package io.rdmabus.transport.tcp;

import io.rdmabus.tck.InPlaceTck;
import io.rdmabus.tck.TckFixture;

/** The zero-copy subscription contract over TCP on loopback sockets, reading netty's receive buffer in place. */
class TcpInPlaceTest extends InPlaceTck {
    @Override
    protected TckFixture createFixture() {
        return new TcpTckFixture(java.util.Map.of());
    }
}
