package io.rdmabus.rdma.transport;

import java.util.List;
import java.util.Map;

import io.rdmabus.Bus;
import io.rdmabus.spi.Transport;
import io.rdmabus.tck.remote.BusNode;
import io.rdmabus.tck.remote.RemoteBusClient;
import io.rdmabus.tck.remote.SplitTckFixture;

/**
 * The rdma TCK fixture across two lab guests: local buses on this guest's rxe0 (an {@link RdmaFixture}), remote buses
 * on the other guest's rxe0 in the {@link RdmaTckBusHostRxeTest} JVM, every bus seeded with every open bus on both
 * guests. The transport limits and known failures are the single-guest fixture's.
 */
final class RdmaSplitFixture extends SplitTckFixture {
    private final RdmaFixture local;

    RdmaSplitFixture(final RdmaFixture local, final RemoteBusClient remote) {
        super(remote);
        this.local = local;
    }

    /** Cross-guest warm-up: both JVMs' bus and proxy paths and the first RC/UD connections between the guests. */
    void warmUpAcrossGuests() {
        warmUp(300, java.time.Duration.ofSeconds(120));
    }

    @Override
    public String name() {
        return "rdma across two rxe guests (buses split between this guest and a bus host on the other)";
    }

    @Override
    protected BusNode newLocalBus(final String busName, final List<String> seeds) {
        return local.newNode(busName, seeds);
    }

    @Override
    protected boolean isLocalClosed(final Bus bus) {
        return local.isClosed(bus);
    }

    @Override
    protected Transport newLocalRawTransport(final List<String> seeds) {
        return local.newRawTransport(seeds);
    }

    @Override
    protected void closeLocal() {
        local.close();
    }

    /**
     * Two: the two guests' 4 vCPUs share the lab host's 2 cores, so each side gets about half the CPU the single-guest
     * TCK has, and every value goes through two guests' rxe and the bridge instead of one device. Measured with the bus
     * host's batched forwarding on a quiet host: the slowest cases used up to 61%
     * of their unscaled bounds (RS stochastic_spec103 18.3 s of 30, reliableFanOutToThreeBuses 19.7 s of 40); the same
     * warm-ups took 2-3 times longer in the earlier runs beside other lab jobs.
     */
    @Override
    public double timeFactor() {
        return 2.0;
    }

    @Override
    public int maxBestEffortFrameLength() {
        return local.maxBestEffortFrameLength();
    }

    @Override
    public long maxBufferedReliableBytes() {
        return local.maxBufferedReliableBytes();
    }

    @Override
    public Map<String, String> knownReactiveStreamsFailures() {
        return local.knownReactiveStreamsFailures();
    }
}
