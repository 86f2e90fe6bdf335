package io.rdmabus.rdma.transport;

import io.rdmabus.Delivery;
import io.rdmabus.TransportException;
import io.rdmabus.rdma.verbs.Access;
import io.rdmabus.rdma.verbs.EventFd;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.spi.AgentThreads;
import io.rdmabus.spi.DedicatedAgentHost;
import io.rdmabus.spi.HostedAgent;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportCapabilities;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportSubscription;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.agrona.concurrent.AgentRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The RDMA transport: RC queue pairs set up through rdma_cm, one per pair of transports (node pair), carrying
 * every topic both ways; a shared completion queue per device polled in batches by one poller agent; credit-based
 * flow control so a slow subscriber back-pressures the publisher (see {@code docs/rdma-transport.md}).
 *
 * <p>This class is the SPI face: it opens the device ({@link DeviceResources}), wires the agents and their command
 * proxies, and adds and removes publications and subscriptions. Threads (Agrona agents under the bus's idle strategy):
 * {@code rdma-bus-rdma-poller-<bus>} runs the {@link Poller} (completions, receive delivery, credits, control messages,
 * resume, periodic duties) and {@code rdma-bus-rdma-cm-<bus>} the {@link ConnectionManager} (listen/accept, dial seeds
 * and discovered advertisers, tear connections down, discovery adverts). Other threads reach them only through
 * {@link PollerProxy} and {@link CmAgentProxy}; what they share is in {@link RdmaContext}.
 *
 * <p>Discovery: {@code TransportContext.discovery().endpoints("rdma")} is a seed list of {@code ip:port} rdma_cm
 * endpoints; this transport connects to each, and every connection carries subscriptions both ways. With
 * {@code rdma.discovery=multicast} each node also multicasts an ADVERT (node id, listen endpoint, published topics) on
 * the bus's UD control group, and a node subscribing an advertised topic dials its advertiser through the same dial
 * path as seeds (see {@link DiscoveryConfig}, {@link Advert}, {@link Discovery}).
 */
public final class RdmaTransport implements Transport {
    /** The discovery key and factory name. */
    public static final String NAME = "rdma";
    private static final Logger LOG = LoggerFactory.getLogger(RdmaTransport.class);
    /** Whether the "no bus secret" warning was logged in this process (once at WARN, then at DEBUG). */
    private static final AtomicBoolean NO_SECRET_WARNED = new AtomicBoolean();
    /** Bound on one sleep of the idle poller on the completion channel (commands queued meanwhile wait this long). */
    private static final long POLLER_SLEEP_MS = 2;
    /** The poller yields (rather than sleeps on the completion channel) this long after its last work. */
    private static final long POLLER_YIELD_WINDOW_NS = TimeUnit.MILLISECONDS.toNanos(5);

    /** Builds the poller agent: {@code Poller::new}; a test builds its own subclass (the late-SUB case). */
    interface PollerFactory {
        Poller create(String roleName, RdmaContext ctx, PollerProxy commands, CmAgentProxy cmProxy);
    }

    private final RdmaTransportConfig config;
    private final PollerFactory pollerFactory;
    private final long nodeId = ThreadLocalRandom.current().nextLong();
    private final PollerProxy pollerProxy = new PollerProxy("rdma poller commands", c -> this.poller.fail(c, null), c -> this.poller.addConnection(c));
    private final CmAgentProxy cmProxy = new CmAgentProxy("rdma cm commands", c -> this.lifecycle.destroy(c), topicId -> this.discovery.onSubscribed(topicId));
    private final ConnectionTable connections = new ConnectionTable();
    private final PublicationTable publications = new PublicationTable();
    private final TransportCounters counters = new TransportCounters();
    /** Local subscriptions per topic id (application threads write; the cm agent's discovery reads it to decide whom to dial). */
    private final ConcurrentHashMap<Integer, Integer> subscribedTopics = new ConcurrentHashMap<>();

    // set once by start() (under this object's monitor) before the agent threads start; read by them and by the
    // application threads that call in after start() returned (volatile started)
    private RdmaContext rdma;
    private Poller poller;
    private ConnectionLifecycle lifecycle;
    /** Null without {@code rdma.discovery=multicast}. */
    private Discovery discovery;
    /** Where the poller runs: its own thread ({@link DedicatedAgentHost#start}) or the bus's host (shared thread, application's doWork). */
    private HostedAgent pollerHost;
    private AgentRunner cmRunner;
    /** Volatile: application threads check these on every call; start() and close() set them under this object's monitor. */
    private volatile boolean started;
    private volatile boolean closed;

    /**
     * @param config validated settings
     */
    public RdmaTransport(final RdmaTransportConfig config) {
        this(config, Poller::new);
    }

    RdmaTransport(final RdmaTransportConfig config, final PollerFactory pollerFactory) {
        this.config = config;
        this.pollerFactory = pollerFactory;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public TransportCapabilities capabilities() {
        // the poller, which hands every frame to the sinks, is hosted by the bus unless it dedicates threads (hostPoller)
        return new TransportCapabilities(config.maxBestEffortFrameBytes(), config.maxFrameBytes(),
                config.ud().mode() == UdConfig.Mode.MULTICAST, true, false, true);
    }

    /**
     * RC messages dropped because they were malformed (truncated, unknown type, topic 0, too long, credits out of
     * range; see {@code ControlMessages}): each is also reported to the bus's error handler.
     *
     * @return malformed messages since start; 0 before {@link #start}
     */
    public long malformedMessages() {
        return counters.get(RdmaCounter.MALFORMED_MESSAGES);
    }

    /**
     * Peers refused: connect requests or replies without the bus secret or with a wrong proof, AUTH missing or wrong,
     * a peer claiming our own node id. Each refusal is logged (at most one line per 10 s, with the count since).
     *
     * @return peers refused since start
     */
    public long refusedPeers() {
        return counters.get(RdmaCounter.REFUSED_PEERS);
    }

    /**
     * For {@link io.rdmabus.BusStats#transportCounters()}: one entry per {@link RdmaCounter} (its name, in its order) that
     * applies: the {@code ALWAYS} ones from construction, the {@code STARTED} ones once started, the discovery ones with
     * {@code rdma.discovery=multicast}, the UD ones with the UD path ({@code rdma.ud.mode} unicast or multicast). Each
     * descriptor says what its counter counts.
     */
    @Override
    public Map<String, Long> counters() {
        Map<String, Long> out = new LinkedHashMap<>();
        boolean running = pollerHost != null;
        UdEndpoint ud = rdma == null ? null : rdma.ud;
        for (RdmaCounter d : RdmaCounter.values()) {
            boolean applies = switch (d.scope()) {
                case ALWAYS -> true;
                case STARTED -> running;
                case DISCOVERY -> running && config.discovery().multicast();
                case UD -> ud != null;
                case UD_RECOVERY -> ud != null && ud.recoveryReceiver != null;
            };
            if (applies) {
                out.put(d.counterName(), value(d, ud));
            }
        }
        return Collections.unmodifiableMap(out);
    }

    /** @return the counter's value: from {@link TransportCounters}, or from the object that keeps it */
    private long value(final RdmaCounter d, final UdEndpoint ud) {
        return switch (d) {
            case POLLER_PROXY_FAILS -> pollerProxy.proxyFails();
            case CM_PROXY_FAILS -> cmProxy.proxyFails();
            case POLLER_COMMANDS_DISCARDED -> pollerProxy.discarded();
            case CM_COMMANDS_DISCARDED -> cmProxy.discarded();
            case ADVERTS_DROPPED -> counters.get(d) + (ud == null ? 0 : ud.advertsDropped());
            case UD_DELIVERED -> ud.delivered();
            case UD_MALFORMED -> ud.malformed();
            case UD_UNKNOWN_TOPIC -> ud.unknownTopic();
            case UD_OWN_LOOPBACK -> ud.ownLoopback();
            case UD_SINK_DROPPED -> ud.sinkDropped();
            case UD_RECEIVE_ERRORS -> ud.receiveErrors();
            case UD_FOREIGN_PEERS -> ud.foreignPeers();
            case UD_DATAGRAMS_SENT -> ud.publicationTotal(UdSendCounts::sent);
            case UD_SEND_POSTS -> ud.publicationTotal(UdSendCounts::posts);
            case UD_DATAGRAMS_NOT_POSTED -> ud.publicationTotal(UdSendCounts::postFailures);
            case UD_GAP_FRAMES -> ud.recoveryReceiver.gapFrames();
            case UD_NAKS_SENT -> ud.recoveryReceiver.naksSent();
            case UD_FRAMES_RECOVERED -> ud.recoveryReceiver.recovered();
            case UD_FRAMES_GIVEN_UP -> ud.recoveryReceiver.givenUp();
            case UD_GAPS_NOT_RECOVERABLE -> ud.recoveryReceiver.notRecoverable();
            case UD_NAKS_SERVED -> ud.recoveryServer.naksServed();
            case UD_FRAMES_RESENT -> ud.recoveryServer.framesResent();
            default -> counters.get(d);
        };
    }

    /**
     * Each live RC connection (established, its peer identified, not failed) with its {@link RdmaConnectionCounter counters}; its id is unique
     * for this transport's life (a reconnect is a new connection). Walks the connection table (any thread).
     */
    @Override
    public List<io.rdmabus.ConnectionStats> connections() {
        List<io.rdmabus.ConnectionStats> out = new ArrayList<>();
        for (Connection c : connections.live()) {
            if (c.identified) {
                out.add(c.stats());
            }
        }
        return out;
    }

    /** @return live RC connections (established, not failed), for tests */
    int liveConnectionCount() {
        return connections.live().size();
    }

    /** @return the local ACK timeout exponent of each live RC connection's QP ({@code ibv_query_qp}), for tests */
    List<Integer> liveConnectionAckTimeouts() {
        List<Integer> out = new ArrayList<>();
        for (Connection c : connections.live()) {
            out.add(c.qp.queryAckTimeout());
        }
        return out;
    }

    /** @return the rdma_cm endpoint this transport listens on ({@code ip:port}), for other nodes' seed lists */
    public String listenEndpoint() {
        if (!started) {
            throw new IllegalStateException("the rdma transport is not started");
        }
        return rdma.device.bindIp + ":" + rdma.device.listenPort;
    }

    @Override
    public synchronized void start(final TransportContext ctx) {
        if (started || closed) {
            throw new IllegalStateException("the rdma transport can be started once");
        }
        String why = RdmaDevices.unavailableReason();
        if (why != null) {
            throw new TransportException("RDMA transport unavailable: " + why);
        }
        DeviceResources device = DeviceResources.open(config, nodeId, ctx.errorHandler()::accept);
        List<InetSocketAddress> seeds = new ArrayList<>();
        try {
            for (String endpoint : ctx.discovery().endpoints(NAME)) {
                InetSocketAddress a = parseEndpoint(endpoint);
                if (!(a.getAddress().getHostAddress().equals(device.bindIp) && a.getPort() == device.listenPort)) {
                    seeds.add(a);
                }
            }
        } catch (RuntimeException e) {
            device.close();
            throw e;
        }
        rdma = new RdmaContext(config, ctx.busName(), ctx.errorHandler()::accept, nodeId, device, connections, publications, counters,
                this::isClosed);
        lifecycle = new ConnectionLifecycle(rdma, this::pollerRunning);
        discovery = config.discovery().multicast() ? new Discovery(rdma, subscribedTopics::containsKey) : null;
        poller = pollerFactory.create("rdma-bus-rdma-poller-" + ctx.busName(), rdma, pollerProxy, cmProxy);
        cmRunner = new AgentRunner(ctx.idleStrategy().get(), ctx.errorHandler()::accept, null,
                new ConnectionManager("rdma-bus-rdma-cm-" + ctx.busName(), rdma, lifecycle, cmProxy, pollerProxy, discovery, seeds));
        if (config.auth().unset()) {
            warnWithoutSecret(ctx.busName(), device);
        }
        pollerHost = hostPoller(ctx);
        AgentThreads.start(cmRunner);
        started = true;
    }

    /**
     * A {@code DEDICATED} bus (its host {@linkplain io.rdmabus.spi.AgentHost#dedicatesThreads() dedicates threads}): the
     * poller gets a thread of its own that sleeps on the completion channel when idle. {@code SHARED} and
     * {@code INVOKER}: the bus hosts it beside its delivery agent (the shared thread, or the application's
     * {@code Bus.doWork()}), so a received frame reaches its subscriber on the thread that polled it (see "Threads" in
     * {@code docs/rdma-transport.md}).
     */
    private HostedAgent hostPoller(final TransportContext ctx) {
        if (ctx.agentHost().dedicatesThreads()) {
            return DedicatedAgentHost.start(new AgentRunner(new PollerIdleStrategy(ctx.idleStrategy().get(), poller::sleep, POLLER_SLEEP_MS,
                    POLLER_YIELD_WINDOW_NS), ctx.errorHandler()::accept, null, poller));
        }
        final EventFd wakeup = new EventFd();
        final PollerSleeper sleeper = new PollerSleeper(poller, wakeup, PollerSleeper.boundMs(config));
        final Runnable wake = ctx.agentHost().idleIn(sleeper);
        if (wake == null) {
            wakeup.close(); // INVOKER, or a spinning strategy: the host never sleeps
            poller.hosted(null);
        } else {
            poller.hosted(sleeper);
            pollerProxy.wakeWith(wake); // the cm agent's and the application's commands end the shared thread's sleep
        }
        return ctx.agentHost().host(poller);
    }

    /** Once per process at WARN (a process may start many buses: tests, a bus host); the rest at DEBUG. */
    private static void warnWithoutSecret(final String busName, final DeviceResources device) {
        final boolean first = NO_SECRET_WARNED.compareAndSet(false, true);
        final String warning = "rdma transport of bus '{}': no bus secret set, so any node that reaches {}:{} over RDMA can join "
                + "this bus; set {} (or {}) on every node to authenticate peers, or {}=none to run without authentication and "
                + "without this warning" + (first ? " (said once per process; other buses without a secret log it at DEBUG)" : "");
        if (first) {
            LOG.warn(warning, busName, device.bindIp, device.listenPort, AuthConfig.SECRET_FILE, AuthConfig.SECRET, AuthConfig.SECRET);
        } else {
            LOG.debug(warning, busName, device.bindIp, device.listenPort, AuthConfig.SECRET_FILE, AuthConfig.SECRET, AuthConfig.SECRET);
        }
    }

    static InetSocketAddress parseEndpoint(final String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        if (colon <= 0) {
            throw new TransportException("Bad rdma seed endpoint '" + endpoint + "': expected ip:port, e.g. 10.77.0.11:7800");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(endpoint.substring(0, colon)),
                    Integer.parseInt(endpoint.substring(colon + 1)));
        } catch (UnknownHostException | NumberFormatException e) {
            throw new TransportException("Bad rdma seed endpoint '" + endpoint + "': expected ip:port, e.g. 10.77.0.11:7800", e);
        }
    }

    @Override
    public TransportPublication addPublication(final TopicDescriptor topic) {
        return addPublication(topic, 0);
    }

    /**
     * A RELIABLE publication given its session id claims nothing until the poller has posted its START on every
     * connection its topic is routed to (see {@link ReliableResume}); this waits (bounded) for that command, so the
     * publication is usable when it returns. Without a session id (0) it learns the session from its first frame and
     * only connections routed after that frame get its START.
     */
    @Override
    public TransportPublication addPublication(final TopicDescriptor topic, final int sessionId) {
        checkRunning();
        if (discovery != null) {
            discovery.requestAdvert(); // subscribers need not wait a whole interval to hear of it
        }
        UdEndpoint ud = udPath(topic);
        if (ud != null) {
            return ud.addPublication(topic, route(topic.topicId()));
        }
        int maxFrame = capabilities().maxFrameLength(topic.delivery());
        // RELIABLE: the slot ring is the retention window (rdma.retention.frames >= rdma.send.buffers), kept for resume
        int slots = topic.delivery() == Delivery.RELIABLE ? config.retentionFrames() : config.sendBuffers();
        RdmaPublication pub = publications.add(index -> {
            MemoryRegion mr = rdma.device.pd.registerMemory((long) config.slotBytes() * slots, Access.NONE);
            return new RdmaPublication(rdma, pollerProxy, pollerHost, index, topic, route(topic.topicId()), mr, maxFrame,
                    config.slotBytes(), slots, sessionId);
        });
        if (pub.retains() && pub.hasSession()) {
            if (pollerRunning()) {
                try {
                    runOnPoller(() -> poller.announce(pub));
                } catch (TransportException e) {
                    // withdrawn: the publication was never announced, so nothing may claim from it. Closing it takes it
                    // out of the table (adverts, resume lookups) and frees its slots after the linger, bounded at 2 s
                    pub.close();
                    throw e;
                }
            } else {
                pub.announced(); // no poller, no connection: nothing to announce
            }
        }
        return pub;
    }

    @Override
    public TransportSubscription addSubscription(final TopicDescriptor topic, final SubscriptionSink sink) {
        checkRunning();
        RdmaSubscription sub = new RdmaSubscription(topic, sink, capabilities().maxFrameLength(topic.delivery()), this::removeSubscription);
        UdEndpoint ud = udPath(topic);
        if (ud != null) {
            ud.subscribe(topic); // multicast mode joins the topic's group before publishers hear of us
        }
        try {
            runOnPoller(() -> poller.addLocal(sub));
        } catch (TransportException e) {
            if (ud != null) {
                ud.unsubscribe(topic); // the poller never took the subscription (withdrawn): leave nothing of it behind
            }
            throw e;
        }
        int topicId = topic.topicId();
        if (subscribedTopics.merge(topicId, 1, Integer::sum) == 1 && discovery != null) {
            // a topic already advertised is dialled now, not at its advertiser's next advert
            cmProxy.onSubscribed(topicId);
        }
        return sub;
    }

    private void checkRunning() {
        if (closed) {
            throw new TransportException("the rdma transport is closed");
        }
        if (!started) {
            throw new IllegalStateException("start the rdma transport first");
        }
    }

    TopicRoute route(final int topicId) {
        return publications.route(topicId);
    }

    boolean isClosed() {
        return closed;
    }

    boolean pollerRunning() {
        return pollerHost != null && !pollerHost.isClosed();
    }

    private void removeSubscription(final RdmaSubscription sub) {
        runOnPoller(() -> poller.removeLocal(sub)); // at once when called from the poller's thread (a sink's cancel)
        UdEndpoint ud = udPath(sub.topic);
        if (ud != null) {
            ud.unsubscribe(sub.topic);
        }
        subscribedTopics.computeIfPresent(sub.topic.topicId(), (k, n) -> n == 1 ? null : n - 1);
    }

    /** @return the UD endpoint that carries {@code topic} (a BEST_EFFORT topic unless {@code rdma.ud.mode=rc}), or null: RC */
    private UdEndpoint udPath(final TopicDescriptor topic) {
        UdEndpoint ud = udEndpoint();
        return ud != null && topic.delivery() == Delivery.BEST_EFFORT ? ud : null;
    }

    /** @return the UD endpoint (tests), or null in {@code rdma.ud.mode=rc} or before start */
    UdEndpoint udEndpoint() {
        return rdma == null ? null : rdma.ud;
    }

    /**
     * Diagnostic counters of the poller (read racily, for harnesses and tests): duty cycles, idle duty cycles,
     * completions polled, DATA receives, control sends, CREDIT sends, sleeps on the completion channel.
     */
    long[] pollerStats() {
        return poller.stats();
    }

    /**
     * Resume counters (read racily, for tests and harnesses): RESUME requests sent (subscriber side), resumes served
     * and frames replayed (publisher side), RESUME_FAILED sent (publisher side) and received (subscriber side).
     */
    long[] resumeStats() {
        return new long[] {counters.get(RdmaCounter.RESUME_REQUESTS), counters.get(RdmaCounter.RESUMES_SERVED),
            counters.get(RdmaCounter.FRAMES_REPLAYED), counters.get(RdmaCounter.RESUMES_REFUSED), counters.get(RdmaCounter.RESUME_FAILURES)};
    }

    /** @return the connection table (tests find live connections in it) */
    ConnectionTable connectionTable() {
        return connections;
    }

    /** @return the cm agent's command proxy (tests run commands on the cm thread through it) */
    CmAgentProxy cmAgentProxy() {
        return cmProxy;
    }

    /** Runs a command on the poller and waits for it (bounded): see {@link PollerProxy#runAndWait}. */
    private void runOnPoller(final Runnable command) {
        final HostedAgent host = pollerHost;
        if (host != null) {
            pollerProxy.runAndWait(host, command, config.commandTimeoutMs());
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (!started) {
            return; // start() failed or never ran: it left nothing open
        }
        for (RdmaPublication p : publications.snapshot()) {
            p.close();
        }
        UdEndpoint ud = rdma.ud;
        if (ud != null) {
            ud.closePublications(); // UD path
        }
        cmRunner.close();
        cmProxy.close(); // the cm agent has stopped: commands it had not run are discarded (counted); close() frees all below
        // Tell every peer we leave (so it tears down at once), then let the poller go.
        try {
            runOnPoller(() -> poller.sayGoodbye());
        } catch (RuntimeException ignored) {
            // best effort: peers also notice the disconnect
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
        while (System.nanoTime() < deadline && connections.anyOutstanding() && pollerRunning()) {
            pollerHost.idleWhileWaiting(); // INVOKER: runs the poller here, the application's loop may be gone
        }
        for (int i = 0; i < ConnectionTable.SIZE; i++) {
            Connection c = connections.atSlot(i);
            if (c != null) {
                c.closed = true;
                try {
                    c.cmId.disconnect();
                } catch (RuntimeException ignored) {
                    // not connected
                }
            }
        }
        pollerHost.close(); // returns once the poller's onClose ran (INVOKER: a cycle on this thread runs it)
        pollerProxy.close();
        DeviceResources.closeQuietly(ud); // UD path: before the CQ and PD it uses
        for (int i = 0; i < ConnectionTable.SIZE; i++) {
            Connection c = connections.atSlot(i);
            if (c != null) {
                c.releaseAll(publications.pools());
                lifecycle.destroyNative(c);
            }
        }
        lifecycle.destroyKeptIds(); // the cm agent has stopped: its kept ids go now, port up or not
        rdma.device.close();
    }
}
