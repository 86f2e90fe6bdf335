package io.rdmabus.rdma.transport;

import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * What the agents of one started transport share (as Aeron's {@code MediaDriver.Context}): settings, identity, native
 * resources, the tables and the counters. Built by {@code start()} before the agent threads start, never changed after
 * (every field is final): each agent reads it freely. The objects it holds say who owns their state.
 */
final class RdmaContext {
    final RdmaTransportConfig config;
    final String busName;
    final Consumer<Throwable> errorHandler;
    /** This transport's random node id (one connection per node pair; adverts). */
    final long nodeId;
    final DeviceResources device;
    /** {@link DeviceResources#ud}: null in {@code rdma.ud.mode=rc}. */
    final UdEndpoint ud;
    final ConnectionTable connections;
    final PublicationTable publications;
    final TransportCounters counters;
    final PeerRefusals refusals;
    final CmProgress cmProgress;
    /** Whether the transport is closing or closed (the SPI face's flag). */
    private final BooleanSupplier transportClosed;

    RdmaContext(final RdmaTransportConfig config, final String busName, final Consumer<Throwable> errorHandler, final long nodeId,
                final DeviceResources device, final ConnectionTable connections, final PublicationTable publications,
                final TransportCounters counters, final BooleanSupplier transportClosed) {
        this.config = config;
        this.busName = busName;
        this.errorHandler = errorHandler;
        this.nodeId = nodeId;
        this.device = device;
        this.ud = device.ud;
        this.connections = connections;
        this.publications = publications;
        this.counters = counters;
        this.refusals = new PeerRefusals(busName, counters);
        this.cmProgress = new CmProgress(busName, config.connectTimeoutMs(), counters);
        this.transportClosed = transportClosed;
    }

    /** @return whether the transport is closing or closed (any thread) */
    boolean transportClosed() {
        return transportClosed.getAsBoolean();
    }
}
