package io.rdmabus.rdma.transport;

import io.rdmabus.rdma.verbs.CmId;
import io.rdmabus.rdma.verbs.RdmaConnectException;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.agrona.concurrent.Agent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connection manager (the cm agent, as Aeron's {@code DriverConductor} is the driver's control agent): accepts
 * peers, dials seeds and discovered advertisers (with backoff), keeps one connection per node pair, notices peers that
 * disconnected, and destroys the connections the poller has let go of (through {@link ConnectionLifecycle}). With
 * {@code rdma.discovery=multicast} it also runs the {@link Discovery} duty. Reached by other threads only through
 * {@link CmAgentProxy}; hands connections to the poller through {@link PollerProxy}.
 *
 * <p>Owner: its own thread ({@code rdma-bus-rdma-cm-<bus>}) owns every field here; a {@link Connection} it builds is
 * the poller's from {@link PollerProxy#addConnection} on (but for the fields {@code Connection} marks as the cm agent's).
 */
final class ConnectionManager implements Agent {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaTransport.class);
    /** Bound on one wait for a connect request (seeds, teardown commands wait at most this long). */
    private static final long CM_WAIT_MS = 25;
    /** How often a due dial looks at the port again while it is down. */
    private static final long PORT_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(200);
    /** Dials in a row to one peer that got no rdma_cm event at all before the hint about a deaf rxe device. */
    private static final int SILENT_DIALS_BEFORE_HINT = 10;

    private final String roleName;
    private final RdmaContext ctx;
    private final RdmaTransportConfig config;
    private final DeviceResources device;
    private final ConnectionLifecycle lifecycle;
    private final CmAgentProxy commands;
    private final PollerProxy pollerProxy;
    /** Null without {@code rdma.discovery=multicast}. */
    private final Discovery discovery;
    /** Seeds first (for ever), then discovered advertisers (while wanted and heard). */
    private final List<DialTarget> targets = new ArrayList<>();
    /** Established connections by the peer's node id: one per node pair. */
    private final HashMap<Long, Connection> byNode = new HashMap<>();
    /** Connections registered per peer node id so far: the next one's {@link RdmaConnectionCounter#RECONNECTS} (cm thread). */
    private final HashMap<Long, Long> connectionsByNode = new HashMap<>();
    /** The connections in {@link #byNode}, watched for DISCONNECTED (see noticeDisconnects). */
    private final List<Connection> watched = new ArrayList<>();
    private long cmCycles;
    /** Failed dials in a row, per seed (logged at 1, 10, 100, ...: a seed down for long is not a log flood). */
    private final HashMap<InetSocketAddress, DialFailures> dialFailures = new HashMap<>();
    /** The port was found down when a dial was due: dials wait (logged once per down period). */
    private boolean dialsHeldForPort;
    /** Runs one command of {@link #commands} as a cm step (a field: an idle cycle allocates nothing). */
    private final Consumer<Runnable> runCommand;

    ConnectionManager(final String roleName, final RdmaContext ctx, final ConnectionLifecycle lifecycle, final CmAgentProxy commands,
                      final PollerProxy pollerProxy, final Discovery discovery, final List<InetSocketAddress> seeds) {
        this.roleName = roleName;
        this.ctx = ctx;
        this.config = ctx.config;
        this.device = ctx.device;
        this.lifecycle = lifecycle;
        this.commands = commands;
        this.pollerProxy = pollerProxy;
        this.discovery = discovery;
        this.runCommand = cmd -> {
            ctx.cmProgress.step("running a command", "");
            cmd.run();
            ctx.cmProgress.done();
        };
        for (InetSocketAddress seed : seeds) {
            targets.add(new DialTarget(seed, 0));
        }
    }

    @Override
    public void onStart() {
        ctx.cmProgress.onCmThreadStart();
        if (discovery != null) {
            discovery.onStart(this);
        }
    }

    @Override
    public int doWork() {
        int work = commands.drain(runCommand);
        work += noticeDisconnects();
        if ((cmCycles++ & 7) == 0) {
            work += lifecycle.destroyIdsAwaitingPort(); // a sysfs read every 8th cycle (~200 ms), only while ids wait
        }
        CmId.Request request;
        try {
            request = device.listener.awaitConnectRequest(CM_WAIT_MS); // sleeps in poll(2): connects are rare, not worth a spin
        } catch (RuntimeException e) {
            ctx.errorHandler.accept(e);
            request = null;
        }
        if (request != null) {
            accept(request);
            work++;
        }
        if (discovery != null) {
            work += discovery.onDuty();
        }
        return work + dialDueTargets();
    }

    /** Dials each target that has no live connection and whose backoff has passed. @return dials started */
    private int dialDueTargets() {
        int work = 0;
        long now = System.nanoTime();
        int portReady = -1; // read once per cycle, and only when a dial is due
        for (int i = 0; i < targets.size(); i++) {
            DialTarget t = targets.get(i);
            Connection c = t.connection;
            if ((c == null || c.destroyed) && now >= t.nextAttemptNs) {
                if (portReady < 0) {
                    portReady = portReadyForDials() ? 1 : 0;
                }
                if (portReady == 0) {
                    t.nextAttemptNs = now + PORT_WAIT_NS;
                    continue;
                }
                // a peer that dialled us (its listen endpoint is this target, or its node id the advertiser's) already
                // joins us: no second connection
                Connection covering = t.nodeId != 0 ? liveByNode(t.nodeId) : null;
                if (covering == null) {
                    covering = liveByEndpoint(t.endpoint);
                }
                if (covering == null && t.nodeId != 0) {
                    ctx.counters.increment(RdmaCounter.DISCOVERY_DIALS);
                }
                t.connection = covering != null ? covering : connect(t.endpoint);
                if (t.connection == null) {
                    t.backoffNs = Math.min(TimeUnit.SECONDS.toNanos(2), Math.max(TimeUnit.MILLISECONDS.toNanos(50), t.backoffNs * 2));
                } else {
                    t.backoffNs = 0;
                }
                // jitter: two nodes dialling each other at the same moment would otherwise retry in lockstep
                long jitterNs = ThreadLocalRandom.current().nextLong(TimeUnit.MILLISECONDS.toNanos(50));
                t.nextAttemptNs = System.nanoTime() + Math.max(t.backoffNs, TimeUnit.MILLISECONDS.toNanos(200)) + jitterNs;
                work++;
            }
        }
        return work;
    }

    /**
     * A peer that disconnected (its rdma_disconnect, or its QP failed) while we send nothing would otherwise stay
     * "live" here until a send fails, and its reconnect would be rejected as a duplicate: hand it to the poller.
     */
    private int noticeDisconnects() {
        int n = 0;
        for (int i = watched.size() - 1; i >= 0; i--) { // by index: an idle cm agent allocates nothing per cycle
            Connection c = watched.get(i);
            if (c.closed || c.destroyed) {
                watched.remove(i);
            } else if (c.established && c.cmId.takeDisconnected()) {
                watched.remove(i);
                pollerProxy.fail(c);
                n++;
            }
        }
        return n;
    }

    /** @return the live connection to the node with id {@code peerNodeId}, or null (cm thread) */
    private Connection liveByNode(final long peerNodeId) {
        Connection c = byNode.get(peerNodeId);
        if (c != null && (c.closed || c.destroyed)) {
            byNode.remove(peerNodeId);
            return null;
        }
        return c;
    }

    private Connection liveByEndpoint(final InetSocketAddress seed) {
        String endpoint = seed.getAddress().getHostAddress() + ":" + seed.getPort();
        for (Connection c : byNode.values()) {
            if (!c.closed && !c.destroyed && endpoint.equals(c.peerEndpoint)) {
                return c;
            }
        }
        return null;
    }

    private void accept(final CmId.Request request) {
        long startNs = System.nanoTime();
        CmId id = request.id();
        PeerAuth.Request req = PeerAuth.parseRequest(request.privateData());
        String peer = req == null ? "(unknown)" : req.listenEndpoint() + " node " + Long.toHexString(req.nodeId());
        String refuse = null;
        if (req == null) {
            refuse = "not an rdma-bus connect request (wrong magic or version)";
        } else if (config.auth().enabled() && (req.flags() & PeerAuth.FLAG_SECRET) == 0) {
            refuse = "it has no bus secret and this node requires one (" + AuthConfig.SECRET_FILE + ")";
        } else if (req.nodeId() == ctx.nodeId) {
            refuse = "it claims this node's own id";
        }
        if (refuse != null) {
            ctx.refusals.refused(peer, refuse);
            rejectQuietly(id);
            return;
        }
        // one connection per node pair: the first one established between two node ids wins; a later one is
        // rejected here, before establishment, so no frame ever travels on a duplicate
        Connection existing = liveByNode(req.nodeId());
        if (existing != null) {
            if (!existing.acceptedHere) {
                rejectQuietly(id); // we dialled it and it dialled us: keep the first one
                return;
            }
            // It dialled us before and dials again: a connector only dials a peer it holds no live connection to, so
            // it gave up on the old one (its QP failed while the DREQ could not get through, or its connect step timed
            // out while we accepted). Keeping the old one would refuse this node until a send to it fails, and a
            // publisher out of that connection's credits sends nothing: close it and take the new one.
            LOG.info("rdma transport of bus '{}': {} dialled again; closing its previous connection {}", ctx.busName, peer, existing);
            byNode.remove(req.nodeId());
            watched.remove(existing);
            ctx.counters.increment(RdmaCounter.CONNECTIONS_REPLACED);
            pollerProxy.fail(existing);
        }
        Connection c = null;
        ctx.cmProgress.step("accepting", peer);
        try {
            c = lifecycle.build(id, null, peer);
            c.acceptedHere = true;
            c.peerNodeId = req.nodeId();
            c.peerEndpoint = req.listenEndpoint();
            byte[] nonce = PeerAuth.nonce();
            byte[] proof = null;
            if (config.auth().enabled()) {
                proof = PeerAuth.proof(config.auth(), PeerAuth.ROLE_ACCEPTOR, ctx.nodeId, req.nodeId(), req.nonce(), nonce);
                c.expectedProof = PeerAuth.proof(config.auth(), PeerAuth.ROLE_CONNECTOR, req.nodeId(), ctx.nodeId, nonce, req.nonce());
                c.authDeadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.connectTimeoutMs());
            }
            int flags = config.auth().enabled() ? PeerAuth.FLAG_SECRET : 0;
            id.accept(PeerAuth.reply(flags, ctx.nodeId, nonce, proof), config.connectTimeoutMs());
            c.established = true;
            byNode.put(req.nodeId(), c);
            c.counters.set(RdmaConnectionCounter.RECONNECTS.id(), connectionsByNode.merge(req.nodeId(), 1L, Long::sum) - 1);
            c.identified = true;
            watched.add(c);
            Connection added = c;
            pollerProxy.addConnection(added);
        } catch (RuntimeException e) {
            if (c != null) {
                lifecycle.destroy(c);
            } else {
                DeviceResources.closeQuietly(id);
            }
            // Not an error of this bus: mostly the peer gave up on this request (its connect step timed out while
            // the request waited here, errno 22 from rdma_accept) and dials again with backoff.
            LOG.warn("rdma transport of bus '{}': accepting the connection of {} failed ({}; the request waited {} ms before this node took "
                    + "it, the accept took {} ms); the peer dials again", ctx.busName, peer, e.getMessage(),
                    (startNs - request.readAtNs()) / 1_000_000, (System.nanoTime() - startNs) / 1_000_000);
        } finally {
            ctx.cmProgress.done();
        }
    }

    private void rejectQuietly(final CmId id) {
        try {
            id.reject(null);
        } catch (RuntimeException ignored) {
            // the peer gives up on its own
        }
        DeviceResources.closeQuietly(id);
    }

    private Connection connect(final InetSocketAddress seed) {
        long startNs = System.nanoTime();
        long connectAtNs = 0;
        CmId id = null;
        Connection c = null;
        String peer = seed.getAddress().getHostAddress() + ":" + seed.getPort();
        try {
            ctx.cmProgress.step("resolving the address of", peer);
            id = CmId.create(device.activeChannel, CmId.PortSpace.TCP);
            id.resolveAddress(new InetSocketAddress(InetAddress.getByName(device.bindIp), 0), seed, config.connectTimeoutMs());
            ctx.cmProgress.step("resolving the route to", peer);
            id.resolveRoute(config.connectTimeoutMs());
            ctx.cmProgress.step("setting up the QP and buffers for", peer);
            c = lifecycle.build(id, null, peer);
            byte[] nonce = PeerAuth.nonce();
            int flags = config.auth().enabled() ? PeerAuth.FLAG_SECRET : 0;
            connectAtNs = System.nanoTime();
            ctx.cmProgress.step("connecting to", peer);
            byte[] reply = id.connectForReply(PeerAuth.request(flags, ctx.nodeId, InetAddress.getByName(device.bindIp).getAddress(), device.listenPort, nonce),
                    config.connectTimeoutMs());
            c.established = true;
            PeerAuth.Reply rep = PeerAuth.parseReply(reply);
            String refuse = null;
            if (rep == null) {
                refuse = "its accept reply is not an rdma-bus one (another protocol or version)";
            } else if (rep.nodeId() == ctx.nodeId) {
                refuse = "it claims this node's own id";
            } else if (config.auth().enabled()) {
                byte[] expected = PeerAuth.proof(config.auth(), PeerAuth.ROLE_ACCEPTOR, rep.nodeId(), ctx.nodeId, nonce, rep.nonce());
                if ((rep.flags() & PeerAuth.FLAG_SECRET) == 0) {
                    refuse = "it has no bus secret and this node requires one (" + AuthConfig.SECRET_FILE + ")";
                } else if (!PeerAuth.matches(expected, rep.proof())) {
                    refuse = "wrong bus secret (its accept proof does not match)";
                }
            }
            if (refuse != null) {
                ctx.refusals.refused(peer, refuse);
                lifecycle.destroy(c);
                return null;
            }
            Connection existing = liveByNode(rep.nodeId());
            if (existing != null) {
                // it reached us first (its request was accepted while we dialled): keep that one, nothing was sent here
                lifecycle.destroy(c);
                return existing;
            }
            c.peerNodeId = rep.nodeId();
            c.peerEndpoint = peer;
            if (config.auth().enabled()) {
                c.proofToSend = PeerAuth.proof(config.auth(), PeerAuth.ROLE_CONNECTOR, ctx.nodeId, rep.nodeId(), rep.nonce(), nonce);
            }
            byNode.put(rep.nodeId(), c);
            c.counters.set(RdmaConnectionCounter.RECONNECTS.id(), connectionsByNode.merge(rep.nodeId(), 1L, Long::sum) - 1);
            c.identified = true;
            watched.add(c);
            Connection added = c;
            pollerProxy.addConnection(added);
            DialFailures failed = dialFailures.remove(seed);
            if (failed != null) {
                LOG.info("rdma transport of bus '{}': connected to {} after {} failed attempt(s)", ctx.busName, peer, failed.inARow);
            }
            return c;
        } catch (UnknownHostException | RuntimeException e) {
            // REJECTED (nobody listens yet, or a duplicate), UNREACHABLE or a timeout: retried with backoff
            if (c != null) {
                lifecycle.destroy(c);
            } else {
                DeviceResources.closeQuietly(id);
            }
            long nowNs = System.nanoTime();
            onDialFailure(seed, peer, e.getMessage() + (connectAtNs == 0 ? "" : " (resolve and QP set-up took "
                    + (connectAtNs - startNs) / 1_000_000 + " ms, the connect " + (nowNs - connectAtNs) / 1_000_000 + " ms)"),
                    e instanceof RdmaConnectException rce && rce.noEvent());
            return null;
        } finally {
            ctx.cmProgress.done();
        }
    }

    /**
     * Whether dials may start now: not while the port is down, and only after the cm ids kept while it was down are
     * destroyed. On rxe (guest kernel 6.1) an rdma_cm handshake in flight when the link goes down leaves the device
     * deaf to unicast until it is re-created (lab/selftest/linkflap-cm.sh): a dial started while the port is down, or
     * in the moment it comes back, is such a handshake. The kept ids' DREQs go first, so they do not meet our REQs.
     */
    private boolean portReadyForDials() {
        if (!device.portActive()) {
            if (!dialsHeldForPort) {
                dialsHeldForPort = true;
                LOG.info("rdma transport of bus '{}': port {}/{} is not ACTIVE; dials wait for it", ctx.busName, device.deviceName, device.devicePort);
            }
            return false;
        }
        if (dialsHeldForPort) {
            dialsHeldForPort = false;
            LOG.info("rdma transport of bus '{}': port {}/{} is ACTIVE again; dialling", ctx.busName, device.deviceName, device.devicePort);
        }
        lifecycle.destroyIdsKeptForPort(); // the port was just read ACTIVE: no second sysfs read
        return true;
    }

    /**
     * @param silent the dial timed out without any rdma_cm event (not a reject, not an unreachable: no reply at all)
     */
    private void onDialFailure(final InetSocketAddress seed, final String peer, final String why, final boolean silent) {
        DialFailures f = dialFailures.computeIfAbsent(seed, k -> new DialFailures());
        long n = ++f.inARow;
        // the first, the 10th, 100th, every 1000th, and whenever the reason changes (a link back up, a peer back)
        String reason = why.replaceAll(" \\(resolve and QP set-up took .*", "");
        if (n == 1 || n == 10 || n == 100 || n % 1000 == 0 || !reason.equals(f.lastReason)) {
            LOG.info("rdma transport of bus '{}': dialling {} failed {} time(s) in a row, retrying with backoff; last: {}",
                    ctx.busName, peer, n, why);
        }
        f.lastReason = reason;
        if (silent) {
            if (++f.silentInARow == SILENT_DIALS_BEFORE_HINT) {
                LOG.warn("rdma transport of bus '{}': {} dials in a row to {} got no rdma_cm reply at all while port {}/{} is ACTIVE. If the "
                        + "peer is up, this host may not receive unicast RoCE packets: on rxe, an rdma_cm handshake in flight when the link "
                        + "went down leaves the device so until it is re-created (rdma link delete/add; docs/rdma-transport.md)",
                        ctx.busName, SILENT_DIALS_BEFORE_HINT, peer, device.deviceName, device.devicePort);
            }
        } else {
            f.silentInARow = 0;
        }
    }
    // ------------------------------------------------------------------------------------------ dial targets (for Discovery)

    /** @return whether a seed already dials {@code endpoint} (for ever) */
    boolean seedDials(final InetSocketAddress endpoint) {
        for (DialTarget seed : targets) {
            if (seed.nodeId == 0 && seed.endpoint.equals(endpoint)) {
                return true;
            }
        }
        return false;
    }

    void addTarget(final DialTarget t) {
        targets.add(t);
    }

    /** Stops dialling {@code t} and forgets its failures. */
    void removeTarget(final DialTarget t) {
        targets.remove(t);
        dialFailures.remove(t.endpoint);
    }

    /** @return whether this node holds a live connection to {@code peerNodeId} */
    boolean connectedTo(final long peerNodeId) {
        return liveByNode(peerNodeId) != null;
    }

    @Override
    public String roleName() {
        return roleName;
    }

    /** An endpoint the cm agent dials (again after failures, with backoff) while it has no live connection to it. */
    static final class DialTarget {
        final InetSocketAddress endpoint;
        /** The advertiser's node id for a discovered target; 0 for a seed. */
        final long nodeId;
        Connection connection;
        long nextAttemptNs;
        long backoffNs;

        DialTarget(final InetSocketAddress endpoint, final long nodeId) {
            this.endpoint = endpoint;
            this.nodeId = nodeId;
        }
    }

    /** Failed dials of one seed since its last connection. */
    private static final class DialFailures {
        long inARow;
        /** Failures in a row that were timeouts without any cm event. */
        int silentInARow;
        String lastReason;
    }
}
