package io.rdmabus.transport.aeron;

import io.rdmabus.ThreadingMode;
import io.rdmabus.tck.TckFixture;
import io.rdmabus.tck.TransportTck;

/** The transport TCK over {@link AeronTckFixture.Mode#IPC} with buses in {@link ThreadingMode#DEDICATED} (the other suites run the default, SHARED). */
class AeronIpcDedicatedTckTest extends TransportTck {
    @Override
    protected TckFixture createFixture() {
        return new AeronTckFixture(AeronTckFixture.Mode.IPC, ThreadingMode.DEDICATED);
    }
}
