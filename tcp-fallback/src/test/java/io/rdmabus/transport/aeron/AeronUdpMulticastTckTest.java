package io.rdmabus.transport.aeron;

import io.rdmabus.tck.TckFixture;
import io.rdmabus.tck.TransportTck;

/** The transport TCK over {@link AeronTckFixture.Mode#UDP_MULTICAST}. */
class AeronUdpMulticastTckTest extends TransportTck {
    @Override
    protected TckFixture createFixture() {
        return new AeronTckFixture(AeronTckFixture.Mode.UDP_MULTICAST);
    }
}
