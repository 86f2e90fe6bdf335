package io.rdmabus.rdma.transport;

import io.rdmabus.TransportException;
import io.rdmabus.rdma.verbs.CmEventChannel;
import io.rdmabus.rdma.verbs.CmId;
import io.rdmabus.rdma.verbs.CompletionChannel;
import io.rdmabus.rdma.verbs.CompletionQueue;
import io.rdmabus.rdma.verbs.ProtectionDomain;
import io.rdmabus.rdma.verbs.VerbsContext;
import io.rdmabus.rdma.verbs.VerbsException;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.function.Consumer;

/**
 * The native resources of one started transport: the rdma_cm listener and event channels, the protection domain, the
 * shared completion queue and its channel, and the UD endpoint (null in {@code rdma.ud.mode=rc}).
 *
 * <p>Opened by {@code start()} before any agent runs, closed by {@code close()} after both have stopped; the fields are
 * final, so both agents read them freely. Each resource is used by one thread: the listener and the active channel by
 * the cm agent, the completion queue and channel by the poller (the cm agent creates QPs on the CQ, which does not use
 * it), the UD endpoint as {@link UdEndpoint} says.
 */
final class DeviceResources implements AutoCloseable {
    final String bindIp;
    /** The device port in use (sysfs name and number), for the port-state checks around a disconnect or a dial. */
    final String deviceName;
    final int devicePort;
    final int listenPort;
    final CmEventChannel listenChannel;
    final CmEventChannel activeChannel;
    final CmId listener;
    final VerbsContext verbs;
    final ProtectionDomain pd;
    final CompletionChannel completionChannel;
    final CompletionQueue cq;
    /** The BEST_EFFORT path over UD; null in {@code rdma.ud.mode=rc}. */
    final UdEndpoint ud;

    private DeviceResources(final Builder b) {
        this.bindIp = b.bindIp;
        this.deviceName = b.deviceName;
        this.devicePort = b.devicePort;
        this.listenPort = b.listenPort;
        this.listenChannel = b.listenChannel;
        this.activeChannel = b.activeChannel;
        this.listener = b.listener;
        this.verbs = b.verbs;
        this.pd = b.pd;
        this.completionChannel = b.completionChannel;
        this.cq = b.cq;
        this.ud = b.ud;
    }

    /**
     * Selects the device port, listens on the first free rdma_cm port of the configured range and opens the rest.
     *
     * @param nodeId       this transport's node id (the UD control group's loopback filter)
     * @param errorHandler the bus's error handler (UD path)
     * @throws TransportException naming what failed; nothing stays open
     */
    static DeviceResources open(final RdmaTransportConfig config, final long nodeId, final Consumer<Throwable> errorHandler) {
        RdmaDevices.DevicePort dp = RdmaDevices.select(config.device(), config.port());
        Builder b = new Builder();
        b.bindIp = config.bindAddress() != null ? config.bindAddress() : RdmaDevices.ipv4Of(dp.netdev());
        b.deviceName = dp.device();
        b.devicePort = dp.port();
        try {
            b.listenChannel = new CmEventChannel();
            b.activeChannel = new CmEventChannel();
            listen(config, b);
            b.verbs = b.listener.context();
            b.pd = b.verbs.allocateProtectionDomain();
            int maxCqe = b.verbs.queryDevice().maxCqe();
            b.completionChannel = b.verbs.createCompletionChannel();
            b.cq = b.verbs.createCompletionQueue(Math.min(maxCqe, 16384), b.completionChannel);
            if (config.ud().mode() != UdConfig.Mode.RC) {
                // with a bus secret the Q_Key derives from it: a node without the secret gets no datagram (UdConfig.qkey)
                b.ud = UdEndpoint.open(config.ud(), config.ud().qkey(AuthConfig.keyOrNull(config.auth())), config.udPayloadBytes(), config.sendBuffers(), b.pd,
                        b.cq, b.bindIp, errorHandler, config.discovery().multicast());
                if (config.discovery().multicast()) {
                    b.ud.joinControlGroup(config.discovery().controlGroup(config.ud()), nodeId);
                }
            }
            return new DeviceResources(b);
        } catch (UnknownHostException | RuntimeException e) {
            new DeviceResources(b).close();
            if (e instanceof TransportException te) {
                throw te;
            }
            throw new TransportException("Cannot start the rdma transport on " + b.bindIp + ": " + e.getMessage(), e);
        }
    }

    private static void listen(final RdmaTransportConfig config, final Builder b) throws UnknownHostException {
        VerbsException last = null;
        for (int p = config.cmPortBase(); p < config.cmPortBase() + config.cmPortRange() && b.listener == null; p++) {
            CmId id = CmId.create(b.listenChannel, CmId.PortSpace.TCP);
            try {
                id.bind(new InetSocketAddress(InetAddress.getByName(b.bindIp), p));
                id.listen(64);
                b.listener = id;
                b.listenPort = p;
            } catch (VerbsException e) {
                last = e;
                id.close();
            }
        }
        if (b.listener == null) {
            throw new TransportException("Cannot listen with rdma_cm on " + b.bindIp + " ports " + config.cmPortBase() + ".."
                    + (config.cmPortBase() + config.cmPortRange() - 1) + ": " + (last == null ? "" : last.getMessage())
                    + "; set " + RdmaTransportConfig.BIND + " or " + RdmaTransportConfig.CM_PORT_BASE, last);
        }
    }

    /** @return whether the device port is ACTIVE (a sysfs read) */
    boolean portActive() {
        return RdmaDevices.portActive(deviceName, devicePort);
    }

    /** Closes what was opened, in reverse order (the connections and publications are gone by now). */
    @Override
    public void close() {
        closeQuietly(ud);
        closeQuietly(cq);
        closeQuietly(completionChannel);
        closeQuietly(pd);
        closeQuietly(listener);
        closeQuietly(listenChannel);
        closeQuietly(activeChannel);
    }

    static void closeQuietly(final AutoCloseable r) {
        if (r == null) {
            return;
        }
        try {
            r.close();
        } catch (Exception ignored) {
            // teardown continues; the resource's owner already reported the cause
        }
    }

    /** What {@link #open} has opened so far. */
    private static final class Builder {
        String bindIp;
        String deviceName;
        int devicePort;
        int listenPort;
        CmEventChannel listenChannel;
        CmEventChannel activeChannel;
        CmId listener;
        VerbsContext verbs;
        ProtectionDomain pd;
        CompletionChannel completionChannel;
        CompletionQueue cq;
        UdEndpoint ud;
    }
}
