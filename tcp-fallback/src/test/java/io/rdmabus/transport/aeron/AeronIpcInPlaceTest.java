package io.rdmabus.transport.aeron;

import io.rdmabus.tck.InPlaceTck;
import io.rdmabus.tck.TckFixture;

/** The zero-copy subscription contract over Aeron IPC (a real media driver), reading Aeron's term buffer in place. */
class AeronIpcInPlaceTest extends InPlaceTck {
    @Override
    protected TckFixture createFixture() {
        return new AeronTckFixture(AeronTckFixture.Mode.IPC);
    }
}
