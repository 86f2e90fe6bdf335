package io.rdmabus.rdma.transport;

import java.util.Map;

import io.rdmabus.tck.InPlaceTck;
import io.rdmabus.tck.TckFixture;

import org.junit.jupiter.api.Tag;

/**
 * The zero-copy subscription contract over RDMA RC on real soft-RoCE: the handler reads each message in the registered
 * receive buffer on the poller thread, before the buffer is re-posted. Runs only in the guest lab, in the single-guest
 * TCK job of {@code scripts/test.sh}.
 */
@Tag("rxe")
class RdmaInPlaceTest extends InPlaceTck {
    @Override
    protected TckFixture createFixture() {
        return new RdmaFixture(Map.of(AuthConfig.SECRET, "rdma-tck-bus-secret-0123456789"));
    }
}
