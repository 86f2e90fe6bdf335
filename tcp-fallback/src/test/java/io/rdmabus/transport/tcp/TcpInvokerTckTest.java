package io.rdmabus.transport.tcp;

import java.util.Map;

import io.rdmabus.ThreadingMode;
import io.rdmabus.tck.TckFixture;
import io.rdmabus.tck.TransportTck;

/** The transport TCK over TCP with buses in {@link ThreadingMode#INVOKER}, each driven by an application loop thread. */
class TcpInvokerTckTest extends TransportTck {
    @Override
    protected TckFixture createFixture() {
        return new TcpTckFixture(Map.of(), ThreadingMode.INVOKER);
    }
}
