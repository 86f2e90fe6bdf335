package io.rdmabus.rdma.transport;

import io.rdmabus.Delivery;
import io.rdmabus.TransportException;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.rdma.verbs.Access;
import io.rdmabus.rdma.verbs.CmEventChannel;
import io.rdmabus.rdma.verbs.CmId;
import io.rdmabus.rdma.verbs.CompletionChannel;
import io.rdmabus.rdma.verbs.CompletionQueue;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.ProtectionDomain;
import io.rdmabus.rdma.verbs.QpType;
import io.rdmabus.rdma.verbs.QueuePair;
import io.rdmabus.rdma.verbs.QueuePairSpec;
import io.rdmabus.rdma.verbs.RdmaConnectException;
import io.rdmabus.rdma.verbs.VerbsContext;
import io.rdmabus.rdma.verbs.VerbsException;
import io.rdmabus.rdma.verbs.WorkCompletions;
import io.rdmabus.spi.AgentThreads;
import io.rdmabus.spi.RetentionExceededException;
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
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The RDMA transport: RC queue pairs set up through rdma_cm, one per pair of transports (node pair), carrying
 * every topic both ways; a shared completion queue per device polled in batches by one poller agent; credit-based
 * flow control so a slow subscriber back-pressures the publisher (see {@code docs/rdma-transport.md}).
 *
 * <p>Threads: {@code rdma-bus-rdma-poller-<bus>} (completions, receive delivery, control messages) and
 * {@code rdma-bus-rdma-cm-<bus>} (listen/accept, connect to seeds, tear connections down), both Agrona agents
 * under the bus's idle strategy. Control operations reach the poller through a command queue.
 *
 * <p>Discovery: {@code TransportContext.discovery().endpoints("rdma")} is a seed list of {@code ip:port} rdma_cm
 * endpoints; this transport connects to each, and every connection carries subscriptions both ways. With
 * {@code rdma.discovery=multicast} each node also multicasts an ADVERT (node id, listen endpoint, published topics) on
 * the bus's UD control group, and a node subscribing an advertised topic dials its advertiser through the same dial
 * path as seeds (see {@link DiscoveryConfig}, {@link Advert}).
 */
public final class RdmaTransport implements Transport {
    /** The discovery key and factory name. */
    public static final String NAME = "rdma";
    private static final int TABLE = 4096;
    private static final int BATCH = 64;
    private static final Logger LOG = LoggerFactory.getLogger(RdmaTransport.class);
    /** Whether the "no bus secret" warning was logged in this process (once at WARN, then at DEBUG). */
    private static final AtomicBoolean NO_SECRET_WARNED = new AtomicBoolean();
    /** At most one log line per this interval about refused peers (a misconfigured or hostile peer retries forever). */
    private static final long REFUSAL_LOG_INTERVAL_NS = TimeUnit.SECONDS.toNanos(10);
    private static final long COMMAND_WAIT_MS = 3000;
    /** Bound on one sleep of the idle poller on the completion channel (commands queued meanwhile wait this long). */
    private static final long POLLER_SLEEP_MS = 2;
    /** Bound on one wait of the cm agent for a connect request (seeds, teardown commands wait at most this long). */
    private static final long CM_WAIT_MS = 25;
    /** The poller yields (rather than sleeps on the completion channel) this long after its last work. */
    private static final long POLLER_YIELD_WINDOW_NS = TimeUnit.MILLISECONDS.toNanos(5);
    /** Discovery: the least time between two adverts of a node (a burst of new publications is one advert). */
    private static final long MIN_ADVERT_GAP_NS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How often a due dial looks at the port again while it is down. */
    private static final long PORT_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(200);
    /** Dials in a row to one peer that got no rdma_cm event at all before the hint about a deaf rxe device. */
    private static final int SILENT_DIALS_BEFORE_HINT = 10;

    private final RdmaTransportConfig config;
    private final long nodeId = ThreadLocalRandom.current().nextLong();
    private final PollerProxy pollerProxy = new PollerProxy("rdma poller commands", c -> poller().fail(c, null), c -> poller().addConnection(c));
    private final CmAgentProxy cmProxy = new CmAgentProxy("rdma cm commands", this::destroy, topicId -> cmAgent().onSubscribed(topicId));
    private final AtomicReferenceArray<Connection> connections = new AtomicReferenceArray<>(TABLE);
    private final AtomicReferenceArray<RdmaPublication> pools = new AtomicReferenceArray<>(TABLE);
    private final AtomicInteger nextConnectionId = new AtomicInteger(1);
    private final AtomicInteger nextPool = new AtomicInteger();
    private final ConcurrentHashMap<Integer, TopicRoute> routes = new ConcurrentHashMap<>();
    private final AtomicLong refusedPeers = new AtomicLong();
    private final AtomicLong refusalsNotLogged = new AtomicLong();
    private volatile long lastRefusalLogNs = System.nanoTime() - REFUSAL_LOG_INTERVAL_NS;
    /** {@link RdmaTransportConfig#keepaliveMs()} in nanoseconds, 0 = no keepalive. */
    private final long keepaliveNs;
    /** {@link RdmaTransportConfig#sendStallMs()} in nanoseconds, 0 = no send-stall watchdog. */
    private final long sendStallNs;
    /** Connections closed because their peer dialled again (cm thread writes, read racily). */
    private volatile long connectionsReplaced;
    private final List<RdmaPublication> publications = new ArrayList<>();
    /** Local subscriptions per topic id (control path writes; the cm agent reads it to decide whom discovery dials). */
    private final ConcurrentHashMap<Integer, Integer> subscribedTopics = new ConcurrentHashMap<>();
    /** A publication was added: the cm agent advertises at once instead of at the next interval. */
    private volatile boolean advertSoon;

    private TransportContext context;
    private String bindIp;
    /** The device port in use (sysfs name and number), for the port-state check before a disconnect. */
    private String deviceName;
    private int devicePort;
    /** cm ids of destroyed connections whose DREQ waits for the port to be ACTIVE again (cm thread). */
    private final List<CmId> idsAwaitingPort = new ArrayList<>();
    /** Connections whose cm id was kept until the port came back (read racily, for the counters). */
    private volatile long disconnectsDeferred;
    /**
     * What the cm thread is doing and since when (0 = nothing that can block): it dials and accepts one peer at a time,
     * so one step stuck in the kernel holds up every other dial; the poller reports a step stuck for longer than its
     * bound (see {@link Poller#checkCmProgress}).
     */
    private volatile long cmStepSinceNs;
    private volatile String cmStep = "";
    private volatile String cmStepPeer = "";
    private volatile Thread cmThread;
    /** cm steps reported as stuck (poller writes, read racily). */
    private volatile long cmStalls;
    private int listenPort;
    private CmEventChannel listenChannel;
    private CmEventChannel activeChannel;
    private CmId listener;
    private VerbsContext verbs;
    private ProtectionDomain pd;
    private CompletionChannel completionChannel;
    private CompletionQueue cq;
    /** The BEST_EFFORT path over UD; null in {@code rdma.ud.mode=rc}. */
    private UdEndpoint ud;
    private AgentRunner pollerRunner;
    private AgentRunner cmRunner;
    private volatile boolean started;
    private volatile boolean closed;

    /**
     * @param config validated settings
     */
    public RdmaTransport(final RdmaTransportConfig config) {
        this.config = config;
        this.keepaliveNs = TimeUnit.MILLISECONDS.toNanos(config.keepaliveMs());
        this.sendStallNs = TimeUnit.MILLISECONDS.toNanos(config.sendStallMs());
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public TransportCapabilities capabilities() {
        return new TransportCapabilities(config.maxBestEffortFrameBytes(), config.maxFrameBytes(),
                config.ud().mode() == UdConfig.Mode.MULTICAST, true);
    }

    /**
     * RC messages dropped because they were malformed (truncated, unknown type, topic 0, too long, credits out of
     * range; see {@code ControlMessages}): each is also reported to the bus's error handler.
     *
     * @return malformed messages since start; 0 before {@link #start}
     */
    public long malformedMessages() {
        return pollerRunner == null ? 0 : poller().malformedMessages;
    }

    /**
     * Peers refused: connect requests or replies without the bus secret or with a wrong proof, AUTH missing or wrong,
     * a peer claiming our own node id. Each refusal is logged (at most one line per 10 s, with the count since).
     *
     * @return peers refused since start
     */
    public long refusedPeers() {
        return refusedPeers.get();
    }

    /**
     * For {@link io.rdmabus.BusStats#transportCounters()}: {@code malformedMessages} and {@code refusedPeers} (above),
     * and with the UD path ({@code rdma.ud.mode} unicast or multicast) its datagram counters: {@code udDelivered},
     * {@code udMalformed} (too short or long, not a DATA envelope), {@code udUnknownTopic} (no local subscription),
     * {@code udOwnLoopback} (this node's own multicast), {@code udSinkDropped}, {@code udReceiveErrors} (failed
     * receive completions) and {@code udForeignPeers} (subscribers announcing another {@code rdma.domain}); RELIABLE
     * resume after a reconnect: {@code resumeRequests} (RESUME sent as a subscriber), {@code resumesServed} and
     * {@code framesReplayed} (as a publisher), {@code resumesRefused} (RESUME_FAILED sent: outside
     * {@code rdma.retention.frames} or session gone) and {@code resumeFailures} (RESUME_FAILED received: a local
     * subscription failed with {@code RetentionExceededException}); liveness: {@code keepaliveSends} (control messages
     * sent on connections with nothing in flight, see {@code rdma.keepalive.ms}), {@code peersLost} (connections closed
     * because the peer stopped acknowledging), {@code sendsStalled} (connections closed because a signalled send got
     * no completion for {@code rdma.send.stall.ms}), {@code connectionsReplaced} (a peer dialled again while this node
     * still held the connection it had accepted from it: the old one is closed) and {@code disconnectsDeferred} (failed
     * connections whose cm id, and so their DREQ, waited for the port to be ACTIVE again) and {@code cmStalls} (steps of
     * the cm thread, which dials and accepts, stuck beyond {@code rdma.connect.timeout.ms} + 10 s; each logged with its stack).
     * Commands to the poller and the cm agent: {@code pollerProxyFails} and {@code cmProxyFails} (commands that found
     * the agent's bounded queue full, or its overflow in use: they waited in the overflow, none was lost) and
     * {@code pollerCommandsDiscarded} and {@code cmCommandsDiscarded} (commands left when the transport closed: not run).
     * With {@code rdma.discovery=multicast}: {@code advertsSent} (advert datagrams posted to the control group, one per
     * page per interval), {@code advertsReceived} (well-formed, verified adverts of other nodes), {@code advertsRejected}
     * (well-formed but without a valid bus-secret MAC, or with one while this node has no secret: dropped, never dialled),
     * {@code advertsMalformed} (failed a bounds check: dropped), {@code advertsDropped} (the poller's queue to the cm
     * agent was full, or the advertiser table is), {@code discoveredPeers} (advertisers heard within
     * {@code rdma.discovery.interval.ms} x 5, a gauge), {@code discoveryDials} (dials of discovered advertisers, retries
     * included) and {@code advertTopicsOmitted} (published topics beyond what the adverts carry: their subscribers need seeds).
     */
    @Override
    public Map<String, Long> counters() {
        Map<String, Long> out = new LinkedHashMap<>();
        out.put("malformedMessages", malformedMessages());
        out.put("refusedPeers", refusedPeers());
        out.put("pollerProxyFails", pollerProxy.proxyFails());
        out.put("cmProxyFails", cmProxy.proxyFails());
        out.put("pollerCommandsDiscarded", pollerProxy.discarded());
        out.put("cmCommandsDiscarded", cmProxy.discarded());
        if (pollerRunner != null) {
            long[] r = resumeStats();
            out.put("resumeRequests", r[0]);
            out.put("resumesServed", r[1]);
            out.put("framesReplayed", r[2]);
            out.put("resumesRefused", r[3]);
            out.put("resumeFailures", r[4]);
            Poller p = poller();
            out.put("keepaliveSends", p.keepaliveSends);
            out.put("peersLost", p.peersLost);
            out.put("sendsStalled", p.sendsStalled);
            out.put("connectionsReplaced", connectionsReplaced);
            out.put("disconnectsDeferred", disconnectsDeferred);
            out.put("cmStalls", cmStalls);
            if (config.discovery().multicast()) {
                CmAgent cm = cmAgent();
                out.put("advertsSent", cm.advertsSent);
                out.put("advertsReceived", cm.advertsReceived);
                out.put("advertsRejected", cm.advertsRejected);
                out.put("advertsMalformed", cm.advertsMalformed);
                out.put("advertsDropped", cm.advertsDropped + (ud == null ? 0 : ud.advertsDropped()));
                out.put("discoveredPeers", (long) cm.discoveredPeers);
                out.put("discoveryDials", cm.discoveryDials);
                out.put("advertTopicsOmitted", cm.advertTopicsOmitted);
            }
        }
        UdEndpoint u = ud;
        if (u != null) {
            out.put("udDelivered", u.delivered());
            out.put("udMalformed", u.malformed());
            out.put("udUnknownTopic", u.unknownTopic());
            out.put("udOwnLoopback", u.ownLoopback());
            out.put("udSinkDropped", u.sinkDropped());
            out.put("udReceiveErrors", u.receiveErrors());
            out.put("udForeignPeers", u.foreignPeers());
        }
        return Collections.unmodifiableMap(out);
    }

    /** @return live RC connections (established, not failed), for tests */
    int liveConnectionCount() {
        int n = 0;
        for (int i = 0; i < TABLE; i++) {
            Connection c = connections.get(i);
            if (c != null && c.established && !c.closed) {
                n++;
            }
        }
        return n;
    }

    /** @return the local ACK timeout exponent of each live RC connection's QP ({@code ibv_query_qp}), for tests */
    List<Integer> liveConnectionAckTimeouts() {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < TABLE; i++) {
            Connection c = connections.get(i);
            if (c != null && c.established && !c.closed) {
                out.add(c.qp.queryAckTimeout());
            }
        }
        return out;
    }

    /** Counts a refused peer and logs it, rate-limited (any thread). */
    void refused(final String peer, final String why) {
        refusedPeers.incrementAndGet();
        long now = System.nanoTime();
        long last = lastRefusalLogNs;
        if (now - last >= REFUSAL_LOG_INTERVAL_NS) {
            lastRefusalLogNs = now;
            long suppressed = refusalsNotLogged.getAndSet(0);
            LOG.warn("rdma transport of bus '{}': refused peer {}: {} ({} refusals in all{})", context.busName(), peer, why, refusedPeers.get(),
                    suppressed > 0 ? ", " + suppressed + " not logged since the last line" : "");
        } else {
            refusalsNotLogged.incrementAndGet();
        }
    }

    /** @return the rdma_cm endpoint this transport listens on ({@code ip:port}), for other nodes' seed lists */
    public String listenEndpoint() {
        if (!started) {
            throw new IllegalStateException("the rdma transport is not started");
        }
        return bindIp + ":" + listenPort;
    }

    @Override
    public synchronized void start(final TransportContext ctx) {
        if (started || closed) {
            throw new IllegalStateException("the rdma transport can be started once");
        }
        this.context = ctx;
        String why = RdmaDevices.unavailableReason();
        if (why != null) {
            throw new TransportException("RDMA transport unavailable: " + why);
        }
        RdmaDevices.DevicePort dp = RdmaDevices.select(config.device(), config.port());
        bindIp = config.bindAddress() != null ? config.bindAddress() : RdmaDevices.ipv4Of(dp.netdev());
        deviceName = dp.device();
        devicePort = dp.port();
        try {
            listenChannel = new CmEventChannel();
            activeChannel = new CmEventChannel();
            VerbsException last = null;
            for (int p = config.cmPortBase(); p < config.cmPortBase() + config.cmPortRange() && listener == null; p++) {
                CmId id = CmId.create(listenChannel, CmId.PortSpace.TCP);
                try {
                    id.bind(new InetSocketAddress(InetAddress.getByName(bindIp), p));
                    id.listen(64);
                    listener = id;
                    listenPort = p;
                } catch (VerbsException e) {
                    last = e;
                    id.close();
                }
            }
            if (listener == null) {
                throw new TransportException("Cannot listen with rdma_cm on " + bindIp + " ports " + config.cmPortBase() + ".."
                        + (config.cmPortBase() + config.cmPortRange() - 1) + ": " + (last == null ? "" : last.getMessage())
                        + "; set " + RdmaTransportConfig.BIND + " or " + RdmaTransportConfig.CM_PORT_BASE, last);
            }
            verbs = listener.context();
            pd = verbs.allocateProtectionDomain();
            int maxCqe = verbs.queryDevice().maxCqe();
            completionChannel = verbs.createCompletionChannel();
            cq = verbs.createCompletionQueue(Math.min(maxCqe, 16384), completionChannel);
            if (config.ud().mode() != UdConfig.Mode.RC) {
                // with a bus secret the Q_Key derives from it: a node without the secret gets no datagram (UdConfig.qkey)
                ud = UdEndpoint.open(config.ud(), config.ud().qkey(config.auth().key()), config.udPayloadBytes(), config.sendBuffers(), pd, cq,
                        bindIp, ctx.errorHandler()::accept, config.discovery().multicast());
                if (config.discovery().multicast()) {
                    ud.joinControlGroup(config.discovery().controlGroup(config.ud()), nodeId);
                }
            }
        } catch (UnknownHostException | RuntimeException e) {
            releaseNative();
            if (e instanceof TransportException te) {
                throw te;
            }
            throw new TransportException("Cannot start the rdma transport on " + bindIp + ": " + e.getMessage(), e);
        }
        List<InetSocketAddress> seeds = new ArrayList<>();
        for (String endpoint : ctx.discovery().endpoints(NAME)) {
            InetSocketAddress a = parseEndpoint(endpoint);
            if (!(a.getAddress().getHostAddress().equals(bindIp) && a.getPort() == listenPort)) {
                seeds.add(a);
            }
        }
        Poller poller = new Poller("rdma-bus-rdma-poller-" + ctx.busName());
        pollerRunner = new AgentRunner(new PollerIdleStrategy(ctx.idleStrategy().get(), poller::sleep, POLLER_SLEEP_MS,
                POLLER_YIELD_WINDOW_NS), ctx.errorHandler()::accept,
                null, poller);
        cmRunner = new AgentRunner(ctx.idleStrategy().get(), ctx.errorHandler()::accept, null, new CmAgent("rdma-bus-rdma-cm-" + ctx.busName(), seeds));
        if (config.auth().unset()) {
            // once per process at WARN (a process may start many buses: tests, a bus host); the rest at DEBUG
            final boolean first = NO_SECRET_WARNED.compareAndSet(false, true);
            final String warning = "rdma transport of bus '{}': no bus secret set, so any node that reaches {}:{} over RDMA can join "
                    + "this bus; set {} (or {}) on every node to authenticate peers, or {}=none to run without authentication and "
                    + "without this warning" + (first ? " (said once per process; other buses without a secret log it at DEBUG)" : "");
            if (first) {
                LOG.warn(warning, ctx.busName(), bindIp, listenPort, AuthConfig.SECRET_FILE, AuthConfig.SECRET, AuthConfig.SECRET);
            } else {
                LOG.debug(warning, ctx.busName(), bindIp, listenPort, AuthConfig.SECRET_FILE, AuthConfig.SECRET, AuthConfig.SECRET);
            }
        }
        AgentThreads.start(pollerRunner);
        AgentThreads.start(cmRunner);
        started = true;
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
        checkRunning();
        advertSoon = config.discovery().multicast(); // subscribers need not wait a whole interval to hear of it
        if (ud != null && topic.delivery() == io.rdmabus.Delivery.BEST_EFFORT) {
            return ud.addPublication(topic, route(topic.topicId())); // UD path
        }
        int maxFrame = capabilities().maxFrameLength(topic.delivery());
        // RELIABLE: the slot ring is the retention window (rdma.retention.frames >= rdma.send.buffers), kept for resume
        int slots = topic.delivery() == Delivery.RELIABLE ? config.retentionFrames() : config.sendBuffers();
        MemoryRegion mr = pd.registerMemory((long) config.slotBytes() * slots, Access.NONE);
        int index = -1;
        for (int i = 0; i < TABLE && index < 0; i++) {
            int candidate = nextPool.getAndIncrement() & (TABLE - 1);
            if (pools.get(candidate) == null) {
                index = candidate;
            }
        }
        if (index < 0) {
            mr.close();
            throw new TransportException("Too many rdma publications open (" + TABLE + ")");
        }
        RdmaPublication pub = new RdmaPublication(this, index, topic, route(topic.topicId()), mr, maxFrame, config.slotBytes(), slots);
        pools.set(index, pub);
        synchronized (publications) {
            publications.add(pub);
        }
        return pub;
    }

    @Override
    public TransportSubscription addSubscription(final TopicDescriptor topic, final SubscriptionSink sink) {
        checkRunning();
        RdmaSubscription sub = new RdmaSubscription(this, topic, sink);
        if (ud != null && topic.delivery() == io.rdmabus.Delivery.BEST_EFFORT) {
            ud.subscribe(topic); // UD path: multicast mode joins the topic's group before publishers hear of us
        }
        runOnPoller(() -> poller().addLocal(sub));
        int topicId = topic.topicId();
        if (subscribedTopics.merge(topicId, 1, Integer::sum) == 1 && config.discovery().multicast()) {
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
        return routes.computeIfAbsent(topicId, k -> new TopicRoute());
    }

    boolean isClosed() {
        return closed;
    }

    boolean pollerRunning() {
        return pollerRunner != null && !pollerRunner.isClosed();
    }

    void removePublication(final RdmaPublication pub) {
        pools.compareAndSet(pub.poolIndex, pub, null);
        synchronized (publications) {
            publications.remove(pub);
        }
    }

    void removeSubscription(final RdmaSubscription sub) {
        if (pollerRunning() && Thread.currentThread() != pollerThread) {
            runOnPoller(() -> poller().removeLocal(sub));
        } else if (pollerRunning()) {
            poller().removeLocal(sub);
        }
        if (ud != null && sub.topic.delivery() == io.rdmabus.Delivery.BEST_EFFORT) {
            ud.unsubscribe(sub.topic); // UD path
        }
        subscribedTopics.computeIfPresent(sub.topic.topicId(), (k, n) -> n == 1 ? null : n - 1);
    }

    /** A publication failed to post on {@code c}: tear it down (any thread). */
    void connectionBroken(final Connection c) {
        if (!closed) {
            pollerProxy.fail(c);
        }
    }

    private volatile Thread pollerThread;

    /** @return the UD endpoint (tests), or null in {@code rdma.ud.mode=rc} */
    UdEndpoint udEndpoint() {
        return ud;
    }

    /**
     * Diagnostic counters of the poller (read racily, for harnesses and tests): duty cycles, idle duty cycles,
     * completions polled, DATA receives, control sends, CREDIT sends, sleeps on the completion channel.
     */
    long[] pollerStats() {
        Poller p = poller();
        return new long[] {p.dutyCycles, p.idleCycles, p.completions, p.dataReceives, p.controlSends, p.creditSends, p.sleeps};
    }

    /**
     * Resume counters (read racily, for tests and harnesses): RESUME requests sent (subscriber side), resumes served
     * and frames replayed (publisher side), RESUME_FAILED sent (publisher side) and received (subscriber side).
     */
    long[] resumeStats() {
        Poller p = poller();
        return new long[] {p.resumesRequested, p.resumesServed, p.framesReplayed, p.resumesRefused, p.resumeFailuresReceived};
    }

    /** See {@link #delaySubsAfterResumeForTest}. */
    private volatile long subDelayAfterResumeMsForTest;

    /**
     * Test hook: after a reconnect that asks to resume, this transport sends its SUBs {@code ms} later instead of right
     * behind the RESUME, so they reach the publisher after its replay has ended (what a slow link or a later completion
     * batch can do). 0 = off.
     */
    void delaySubsAfterResumeForTest(final long ms) {
        subDelayAfterResumeMsForTest = ms;
    }

    /**
     * Test hook: breaks every RC connection of this transport as a network fault would ({@code rdma_disconnect} on the
     * cm thread: our QP goes to the error state, posted work flushes, the peer gets DISCONNECTED). Seeds redial.
     *
     * @return connections broken
     */
    int breakConnectionsForTest() {
        AtomicInteger broken = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(1);
        cmProxy.run(() -> {
            try {
                for (int i = 0; i < TABLE; i++) {
                    Connection c = connections.get(i);
                    if (c != null && c.established && !c.closed && !c.destroyed) {
                        try {
                            c.cmId.disconnect();
                            broken.incrementAndGet();
                        } catch (RuntimeException ignored) {
                            // already going away
                        }
                    }
                }
            } finally {
                done.countDown();
            }
        });
        try {
            if (!done.await(COMMAND_WAIT_MS, TimeUnit.MILLISECONDS)) {
                throw new TransportException("the rdma cm agent did not run the test hook within " + COMMAND_WAIT_MS + " ms");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return broken.get();
    }

    private Poller poller() {
        return (Poller) pollerRunner.agent();
    }

    private CmAgent cmAgent() {
        return (CmAgent) cmRunner.agent();
    }

    /** Runs a command on the poller and waits for it (bounded), so the caller sees its effect. */
    private void runOnPoller(final Runnable command) {
        CountDownLatch done = new CountDownLatch(1);
        Runnable wrapped = () -> {
            try {
                command.run();
            } finally {
                done.countDown();
            }
        };
        if (!pollerRunning()) {
            return;
        }
        pollerProxy.run(wrapped);
        try {
            if (!done.await(COMMAND_WAIT_MS, TimeUnit.MILLISECONDS) && pollerRunning()) {
                throw new TransportException("the rdma poller did not run a command within " + COMMAND_WAIT_MS + " ms");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException("interrupted while waiting for the rdma poller", e);
        }
    }

    // ------------------------------------------------------------------------------------------------ connections

    /** Builds a connection's QP and buffers on {@code id} and pre-posts every receive buffer (cm thread). */
    private Connection buildConnection(final CmId id, final CmEventChannel ownChannel, final String peer) {
        QueuePair qp = null;
        MemoryRegion recvMr = null;
        MemoryRegion ctrlMr = null;
        try {
            if (config.ackTimeoutExp() > 0) {
                id.setAckTimeout(config.ackTimeoutExp()); // applies when librdmacm moves the QP to RTS
            }
            int sendWr = config.dataCredits() + RdmaTransportConfig.CONTROL_SLOTS + Connection.SIGNAL_INTERVAL + 8;
            int inline = Connection.INLINE_BYTES;
            try {
                qp = id.createQueuePair(pd, cq, cq, new QueuePairSpec(QpType.RC, sendWr, config.recvBuffers(), inline));
            } catch (VerbsException e) {
                inline = 0; // a device without inline sends: every send reads its registered buffer
                qp = id.createQueuePair(pd, cq, cq, new QueuePairSpec(QpType.RC, sendWr, config.recvBuffers(), 0));
            }
            recvMr = pd.registerMemory((long) config.slotBytes() * config.recvBuffers(), Access.LOCAL_WRITE);
            ctrlMr = pd.registerMemory((long) Wire.CONTROL_BYTES * RdmaTransportConfig.CONTROL_SLOTS, Access.NONE);
            int connId = nextConnectionId.getAndIncrement();
            Connection c = new Connection(connId, peer, id, ownChannel, qp, recvMr, ctrlMr, config.slotBytes(), config.recvBuffers(),
                    sendWr, inline);
            for (int s = 0; s < config.recvBuffers(); s++) {
                long wrId = WorkRequestId.of(connId, WorkRequestId.KIND_RECV, 0, s);
                int rc = qp.postRecv(c.recvRequest.prepare(wrId, recvMr, (long) s * c.slotBytes, c.slotBytes));
                if (rc != 0) {
                    throw new VerbsException("ibv_post_recv", rc);
                }
            }
            Connection prev = connections.getAndSet(connId & (TABLE - 1), c);
            if (prev != null && !prev.destroyed) {
                connections.set(connId & (TABLE - 1), prev);
                destroyNative(c);
                throw new TransportException("Too many rdma connections (" + TABLE + ")");
            }
            return c;
        } catch (RuntimeException e) {
            closeQuietly(qp);
            closeQuietly(recvMr);
            closeQuietly(ctrlMr);
            throw e;
        }
    }

    private void destroyNative(final Connection c) {
        destroyNative(c, true);
    }

    private void destroyNative(final Connection c, final boolean withCmId) {
        c.destroyed = true;
        synchronized (c.postLock) {
            // a publisher that entered its post before closed was set may still be in it (destroy waits for posters only
            // 1 s, and a thread can stall longer under load): every post checks closed under this lock, so none follows
            closeQuietly(c.qp);
        }
        c.recvRequest.close();
        c.ctrlRequest.close();
        closeQuietly(c.recvMr);
        closeQuietly(c.ctrlMr);
        if (withCmId) {
            closeQuietly(c.cmId);
        }
        closeQuietly(c.ownChannel);
        connections.compareAndSet(c.id & (TABLE - 1), c, null);
    }

    /** Disconnects and frees a connection the poller has let go of (cm thread, or close()). */
    private void destroy(final Connection c) {
        if (c.destroyed) {
            return;
        }
        c.closed = true;
        // rxe (guest kernel 6.1): a DREQ (of rdma_disconnect, or of rdma_destroy_id on a connected id) sent while the port
        // was down left the host unable to complete any rdma_cm handshake after the link came back: the device counted no
        // received packet, every REP was lost (RdmaLinkFlapRxeTest, docs/rdma-transport.md). So while the port is down the
        // QP only goes to error here, and the cm id (whose destruction sends the DREQ) is kept until the port is ACTIVE.
        boolean portUp = closed || deviceName == null || RdmaDevices.portActive(deviceName, devicePort);
        try {
            if (portUp) {
                c.cmId.disconnect(); // QP to error: posted work flushes, so send slots get their completions back
            } else {
                c.qp.toError();
            }
        } catch (RuntimeException ignored) {
            // already disconnected by the peer or never established
        }
        // wait for posters to leave and for the flush completions; sends that completed unsignalled produce none, so
        // stop once the count stops moving for 20 ms, then release what is left
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        long lastChangeNs = System.nanoTime();
        int last = c.outstandingSends.get();
        while ((c.posters.get() > 0 || (c.outstandingSends.get() > 0 && pollerRunning())) && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            int now = c.outstandingSends.get();
            if (now != last) {
                last = now;
                lastChangeNs = System.nanoTime();
            } else if (c.posters.get() == 0 && System.nanoTime() - lastChangeNs > TimeUnit.MILLISECONDS.toNanos(20)) {
                break;
            }
        }
        c.releaseAll(pools);
        if (portUp) {
            destroyNative(c);
        } else {
            disconnectsDeferred++;
            LOG.info("rdma transport of bus '{}': port {}/{} is down; {} keeps its cm id (and so its DREQ) until the port is ACTIVE again",
                    context.busName(), deviceName, devicePort, c);
            idsAwaitingPort.add(c.cmId);
            destroyNative(c, false);
        }
    }

    /** cm thread: destroys the cm ids kept while the port was down, once it is ACTIVE again (or the transport closes). */
    private int destroyIdsAwaitingPort() {
        if (idsAwaitingPort.isEmpty() || !closed && !RdmaDevices.portActive(deviceName, devicePort)) {
            return 0;
        }
        return destroyIdsKeptForPort();
    }

    /** cm thread: destroys the kept cm ids now (the caller knows the port is ACTIVE, or the transport closes). */
    private int destroyIdsKeptForPort() {
        if (idsAwaitingPort.isEmpty()) {
            return 0;
        }
        int n = idsAwaitingPort.size();
        long startNs = System.nanoTime();
        cmStep("destroying the cm ids kept while the port was down", "");
        for (CmId id : idsAwaitingPort) {
            closeQuietly(id);
        }
        cmStepDone();
        idsAwaitingPort.clear();
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
        // rdma_destroy_id of a connected id sends its DREQ and can wait for the CM in the kernel; this thread also dials:
        // say so when that takes long (a soak run's subscriber did not redial for 170 s after a NIC fault, cause unknown)
        if (tookMs >= 1000) {
            LOG.warn("rdma transport of bus '{}': destroying {} cm id(s) kept while the port was down took {} ms (no dial or accept "
                    + "meanwhile)", context.busName(), n, tookMs);
        } else {
            LOG.info("rdma transport of bus '{}': destroyed {} cm id(s) kept while port {}/{} was down ({} ms{})",
                    context.busName(), n, deviceName, devicePort, tookMs, closed ? ", transport closing" : ", the port is ACTIVE again");
        }
        return n;
    }

    /** cm thread: marks the start of a step that can block (constant text, no allocation), for the poller's stuck-step report. */
    private void cmStep(final String what, final String peer) {
        cmStep = what;
        cmStepPeer = peer;
        cmStepSinceNs = System.nanoTime();
    }

    private void cmStepDone() {
        cmStepSinceNs = 0;
    }

    private static void closeQuietly(final AutoCloseable r) {
        if (r == null) {
            return;
        }
        try {
            r.close();
        } catch (Exception ignored) {
            // teardown continues; the resource's owner already reported the cause
        }
    }

    // ------------------------------------------------------------------------------------------------ close

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (!started) {
            releaseNative();
            return;
        }
        List<RdmaPublication> pubs;
        synchronized (publications) {
            pubs = new ArrayList<>(publications);
        }
        for (RdmaPublication p : pubs) {
            p.close();
        }
        if (ud != null) {
            ud.closePublications(); // UD path
        }
        cmRunner.close();
        cmProxy.close(); // the cm agent has stopped: commands it had not run are discarded (counted); close() frees all below
        // Tell every peer we leave (so it tears down at once), then let the poller go.
        try {
            runOnPoller(() -> poller().sayGoodbye());
        } catch (RuntimeException ignored) {
            // best effort: peers also notice the disconnect
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
        while (System.nanoTime() < deadline && anyOutstanding()) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        for (int i = 0; i < TABLE; i++) {
            Connection c = connections.get(i);
            if (c != null) {
                c.closed = true;
                try {
                    c.cmId.disconnect();
                } catch (RuntimeException ignored) {
                    // not connected
                }
            }
        }
        pollerRunner.close();
        pollerProxy.close();
        closeQuietly(ud); // UD path: before the CQ and PD it uses
        for (int i = 0; i < TABLE; i++) {
            Connection c = connections.get(i);
            if (c != null) {
                c.releaseAll(pools);
                destroyNative(c);
            }
        }
        for (CmId id : idsAwaitingPort) { // the cm agent has stopped: its kept ids go now, port up or not
            closeQuietly(id);
        }
        idsAwaitingPort.clear();
        releaseNative();
    }

    private boolean anyOutstanding() {
        for (int i = 0; i < TABLE; i++) {
            Connection c = connections.get(i);
            if (c != null && c.outstandingSends.get() > 0) {
                return true;
            }
        }
        return false;
    }

    private void releaseNative() {
        closeQuietly(ud);
        closeQuietly(cq);
        closeQuietly(completionChannel);
        closeQuietly(pd);
        closeQuietly(listener);
        closeQuietly(listenChannel);
        closeQuietly(activeChannel);
    }

    // ------------------------------------------------------------------------------------------------ poller

    /** The completion poller: one per transport and device, owns receive delivery and control messages. */
    private final class Poller implements Agent {
        private final String roleName;
        private final WorkCompletions wcs = new WorkCompletions(BATCH);
        private final Int2ObjectHashMap<RdmaSubscription[]> local = new Int2ObjectHashMap<>();
        private final List<Connection> active = new ArrayList<>();
        // plain counters written by the poller only, read (racily, for diagnostics) through stats()
        long dutyCycles;
        long idleCycles;
        long completions;
        long dataReceives;
        volatile long malformedMessages;
        long controlSends;
        long creditSends;
        long sleeps;
        long resumesRequested;
        long resumesServed;
        long framesReplayed;
        long resumesRefused;
        long resumeFailuresReceived;
        long keepaliveSends;
        long peersLost;
        long sendsStalled;
        private long nextKeepaliveNs;
        private long nextStallCheckNs;
        /** The cm step last reported stuck (its start), so each is reported once. */
        private long cmStallReportedForNs;
        private final long cmStepLimitNs = TimeUnit.MILLISECONDS.toNanos(config.connectTimeoutMs() + 10_000L);
        /** Subscriber side: resume state of connections lost, by the peer's node id, until it expires. */
        private final Long2ObjectHashMap<ResumeState> resumeByNode = new Long2ObjectHashMap<>();
        /** Publisher side: replays of retained frames to reconnected subscribers, in progress. */
        private final List<Replay> replays = new ArrayList<>();
        /** The last sleep on the completion channel ran out without an event: nothing arrived for a while. */
        private boolean quiet;
        private int emptyPolls;

        Poller(final String roleName) {
            this.roleName = roleName;
        }

        @Override
        public void onStart() {
            pollerThread = Thread.currentThread();
        }

        @Override
        public int doWork() {
            int work = pollerProxy.drain();
            int n = cq.poll(wcs);
            if (n < 0) {
                throw new TransportException("ibv_poll_cq failed: " + n);
            }
            for (int i = 0; i < n; i++) {
                onCompletion(i);
            }
            work += n;
            if (ud != null) {
                work += ud.onPollerDuty(); // UD path
            }
            for (int i = replays.size() - 1; i >= 0; i--) {
                work += stepReplay(replays.get(i));
            }
            // owed credits below the batch threshold go back once the poller is quiet (a sleep timed out, or ~1000
            // empty polls when spinning), not on every empty poll: that cost one CREDIT per ~3 frames under load
            emptyPolls = n == 0 ? emptyPolls + 1 : 0;
            boolean idle = quiet || emptyPolls >= 1000;
            quiet = false;
            boolean keepalive = false;
            if (keepaliveNs > 0 || sendStallNs > 0) {
                long now = System.nanoTime();
                if (keepaliveNs > 0 && now - nextKeepaliveNs >= 0) {
                    keepalive = true;
                    nextKeepaliveNs = now + keepaliveNs;
                }
                if (sendStallNs > 0 && now - nextStallCheckNs >= 0) {
                    nextStallCheckNs = now + sendStallNs / 8;
                    checkCmProgress(now);
                    for (int i = active.size() - 1; i >= 0; i--) {
                        work += checkSendProgress(active.get(i), now);
                    }
                }
            }
            for (int i = 0; i < active.size(); i++) {
                Connection c = active.get(i);
                work += deliverHeld(c);
                work += flushControl(c, idle, keepalive);
            }
            if (idle) {
                emptyPolls = 0;
            }
            completions += n;
            dutyCycles++;
            if (work == 0) {
                idleCycles++;
            }
            return work;
        }

        /**
         * Idle: arms the CQ, polls once more (a completion that raced the arming is handled now), then waits on the
         * completion channel (bounded). While frames are held for a back-pressuring sink it only parks briefly, so
         * they are offered again soon.
         *
         * @return completions handled (0 if it slept)
         */
        int sleep(final long timeoutMs) {
            if (pollerProxy.hasCommands()) {
                return 1;
            }
            for (int i = 0; i < active.size(); i++) {
                if (active.get(i).heldSize > 0) {
                    LockSupport.parkNanos(100_000);
                    return 0;
                }
            }
            for (int i = 0; i < replays.size(); i++) {
                if (!replays.get(i).armed) {
                    // a replay waits for the publisher thread's commit (no completion will wake us for that): look again soon;
                    // an armed replay waiting for credits sleeps like any sender, the peer's CREDIT is a completion
                    LockSupport.parkNanos(100_000);
                    return 0;
                }
            }
            int rc = cq.requestNotify(false);
            if (rc != 0) {
                throw new TransportException("ibv_req_notify_cq failed: " + rc);
            }
            int n = cq.poll(wcs);
            if (n < 0) {
                throw new TransportException("ibv_poll_cq failed: " + n);
            }
            if (n > 0) {
                for (int i = 0; i < n; i++) {
                    onCompletion(i);
                }
                completions += n;
                return n;
            }
            sleeps++;
            quiet = completionChannel.awaitEvent(timeoutMs, cq) == null;
            return 0;
        }

        private void onCompletion(final int i) {
            long wrId = wcs.wrId(i);
            int connId = WorkRequestId.connectionId(wrId);
            int kind = WorkRequestId.kind(wrId);
            int pool = WorkRequestId.pool(wrId);
            int slot = WorkRequestId.slot(wrId);
            int status = wcs.status(i);
            if (WorkRequestId.isUd(kind)) {
                if (ud != null) {
                    ud.onCompletion(wcs, i, kind, pool, slot, local); // UD path
                }
                return;
            }
            Connection c = connections.get(connId & (TABLE - 1));
            if (c != null && c.id != connId) {
                c = null;
            }
            switch (kind) {
                case WorkRequestId.KIND_DATA_SEND -> {
                    if (c != null) {
                        c.sendCompletions++;
                        c.onDataSendCompletion(WorkRequestId.sequenceBits(wrId), pools);
                    }
                }
                case WorkRequestId.KIND_CTRL_SEND -> {
                    if (c != null) {
                        c.sendCompletions++;
                        c.ctrlBusy[slot] = false;
                        c.outstandingSends.decrementAndGet();
                        c.onControlSendCompletion(slot, pools);
                    }
                }
                case WorkRequestId.KIND_RECV -> {
                    if (c != null && !c.closed && status == WorkCompletions.SUCCESS) {
                        onReceive(c, slot, wcs.byteLength(i));
                    }
                }
                default -> context.errorHandler().accept(new TransportException("unknown rdma work request id " + wrId));
            }
            if (status != WorkCompletions.SUCCESS && c != null && !c.closed) {
                if (status == WorkCompletions.RETRY_EXC_ERR) {
                    // the peer stopped acknowledging: gone or unreachable, not a fault of this node; it redials (or we do)
                    peersLost++;
                    LOG.warn("rdma transport of bus '{}': {} stopped acknowledging ({}); closing the connection, seeds redial and "
                            + "RELIABLE subscribers resume", context.busName(), c, WorkCompletions.statusText(status));
                    fail(c, null);
                } else {
                    fail(c, status == WorkCompletions.WR_FLUSH_ERR ? null
                            : new TransportException(c + ": work completion failed: " + WorkCompletions.statusText(status)));
                }
            }
        }

        private void onReceive(final Connection c, final int slot, final int length) {
            if (!c.admitted) {
                // not verified yet (the cm agent still checks the peer's proof): keep it, act on it only after admission,
                // so a peer that is then refused never had a SUB, UD address or credit taken from it
                c.earlySlot[c.earlyCount] = slot;
                c.earlyLength[c.earlyCount] = length;
                c.earlyCount++;
                return;
            }
            int base = slot * c.slotBytes;
            int type = c.recvView.getInt(base + Wire.TYPE_OFFSET, ByteOrder.LITTLE_ENDIAN);
            int arg = c.recvView.getInt(base + Wire.ARG_OFFSET, ByteOrder.LITTLE_ENDIAN);
            if (c.expectedProof != null) {
                // not authenticated yet: the only message accepted is the connector's AUTH (or its BYE)
                verifyAuth(c, slot, type, length);
                return;
            }
            int kind = ControlMessages.classify(c.recvView, base, length, config.maxFrameBytes(), RdmaTransportConfig.MAX_DATA_CREDITS);
            if (kind < 0 && kind != ControlMessages.ERR_PEER_FRAME) {
                // bounds-checked before anything acts on it: a malformed message is counted, reported and dropped
                repost(c, slot);
                malformedMessages++;
                context.errorHandler().accept(new TransportException(c + ": dropped a malformed message (" + ControlMessages.describe(kind)
                        + ", type " + type + ", " + length + " bytes)"));
                return;
            }
            if (type == Wire.DATA) {
                dataReceives++;
                int tail = (c.heldHead + c.heldSize) % c.recvSlots;
                c.heldSlot[tail] = slot;
                c.heldLength[tail] = length;
                c.heldSize++;
                return;
            }
            switch (type) {
                case Wire.INIT -> {
                    int peerFrame = c.recvView.getInt(base + Wire.ARG2_OFFSET, ByteOrder.LITTLE_ENDIAN);
                    if (peerFrame < config.maxFrameBytes()) {
                        repost(c, slot);
                        fail(c, new TransportException(c + ": the peer's " + RdmaTransportConfig.FRAME_BYTES + " is " + peerFrame
                                + ", smaller than ours (" + config.maxFrameBytes() + "): use the same value on every node"));
                        return;
                    }
                    c.credits.addAndGet(arg);
                    c.ready = true;
                }
                case Wire.CREDIT -> c.credits.addAndGet(arg);
                case Wire.SUB -> {
                    if (replayPending(c, arg)) {
                        c.deferredSubs.add(arg); // new frames only after the replay (stepReplay adds the route)
                    } else {
                        route(arg).add(c);
                    }
                }
                case Wire.UNSUB -> {
                    c.deferredSubs.remove(arg);
                    if (replayPending(c, arg)) {
                        c.unsubscribedDuringReplay.add(arg);
                    }
                    route(arg).remove(c);
                }
                case Wire.RESUME -> onResume(c, arg, c.recvView.getInt(base + Wire.ARG2_OFFSET, ByteOrder.LITTLE_ENDIAN),
                        c.recvView.getLong(base + Wire.NEXT_SEQUENCE_OFFSET, ByteOrder.LITTLE_ENDIAN));
                case Wire.RESUME_FAILED -> onResumeFailed(c, arg, c.recvView.getInt(base + Wire.ARG2_OFFSET, ByteOrder.LITTLE_ENDIAN),
                        c.recvView.getInt(base + Wire.ARG3_OFFSET, ByteOrder.LITTLE_ENDIAN),
                        c.recvView.getLong(base + Wire.NEXT_SEQUENCE_OFFSET, ByteOrder.LITTLE_ENDIAN),
                        c.recvView.getLong(base + Wire.OLDEST_SEQUENCE_OFFSET, ByteOrder.LITTLE_ENDIAN));
                case Wire.BYE -> {
                    fail(c, null);
                    return;
                }
                case Wire.UD_INFO -> {
                    if (ud != null) { // classify checked the length
                        ud.onPeerInfo(c, arg, c.recvView.getInt(base + Wire.ARG2_OFFSET, ByteOrder.LITTLE_ENDIAN),
                                c.recvView.getInt(base + Wire.ARG3_OFFSET, ByteOrder.LITTLE_ENDIAN)); // UD path
                    }
                }
                case Wire.AUTH -> {
                    // a connector's proof arriving at a node without a secret: the connector would refuse us anyway
                    repost(c, slot);
                    refused(c.peer, "it sent AUTH (it has a bus secret) but this node has none: set the same " + AuthConfig.SECRET_FILE
                            + " on every node");
                    fail(c, null);
                    return;
                }
                default -> {
                    // no other type gets here: classify dropped it as malformed
                }
            }
            repost(c, slot);
        }

        private void verifyAuth(final Connection c, final int slot, final int type, final int length) {
            int base = slot * c.slotBytes;
            if (type == Wire.BYE) {
                fail(c, null);
                return;
            }
            boolean ok = false;
            if (type == Wire.AUTH && length >= Wire.AUTH_BYTES) {
                byte[] got = new byte[PeerAuth.PROOF_BYTES];
                c.recvView.getBytes(base + Wire.ENVELOPE_BYTES, got);
                ok = PeerAuth.matches(c.expectedProof, got);
            }
            repost(c, slot);
            if (!ok) {
                refused(c.peer, type == Wire.AUTH ? "wrong bus secret (its AUTH proof does not match)"
                        : "no AUTH before its first message (type " + type + "): it has no bus secret or another one");
                fail(c, null);
                return;
            }
            c.expectedProof = null; // authenticated: INIT and SUBs go out on the next flushControl
        }

        private void repost(final Connection c, final int slot) {
            if (c.closed) {
                return;
            }
            int rc = c.qp.postRecv(c.recvRequest.prepare(WorkRequestId.of(c.id, WorkRequestId.KIND_RECV, 0, slot), c.recvMr, (long) slot * c.slotBytes,
                    c.slotBytes));
            if (rc != 0) {
                fail(c, new VerbsException("ibv_post_recv", rc));
            }
        }

        /** Offers held frames in order; stops at the first one the bus back-pressures. */
        private int deliverHeld(final Connection c) {
            int delivered = 0;
            while (c.heldSize > 0 && !c.closed) {
                int slot = c.heldSlot[c.heldHead];
                int length = c.heldLength[c.heldHead];
                int base = slot * c.slotBytes;
                int topicId = c.recvView.getInt(base + Wire.ARG_OFFSET, ByteOrder.LITTLE_ENDIAN);
                RdmaSubscription[] subs = local.get(topicId);
                if (subs != null) {
                    for (int k = c.headSinkIndex; k < subs.length; k++) {
                        RdmaSubscription s = subs[k];
                        if (s.closed) {
                            continue;
                        }
                        int r = s.sink.onFrame(c.recvView, base + Wire.ENVELOPE_BYTES, length - Wire.ENVELOPE_BYTES);
                        if (r == SubscriptionSink.BACK_PRESSURE) {
                            c.headSinkIndex = k;
                            return delivered;
                        }
                    }
                    if (subs.length > 0 && subs[0].topic.delivery() == Delivery.RELIABLE) {
                        recordConsumed(c, topicId, base + Wire.ENVELOPE_BYTES, length - Wire.ENVELOPE_BYTES);
                    }
                }
                c.headSinkIndex = 0;
                c.heldHead = (c.heldHead + 1) % c.recvSlots;
                c.heldSize--;
                c.creditsToReturn++;
                delivered++;
                repost(c, slot);
            }
            return delivered;
        }

        /**
         * Send-stall watchdog: a connection whose device owes a completion (a control send, or a signalled data send)
         * and has polled none for {@code rdma.send.stall.ms} is failed, so the redial, the replacement of the accepted
         * connection and RELIABLE resume take over. On rxe a send posted while the link was down was seen neither to
         * complete nor to fail after the link came back, and it blocks the keepalive and every credit behind it.
         *
         * @return 1 if the connection was failed
         */
        private int checkSendProgress(final Connection c, final long nowNs) {
            boolean owed = anyControlInFlight(c) || c.signaledDataSendInFlight();
            if (!owed || c.sendCompletions != c.sendCompletionsAtCheck) {
                c.sendCompletionsAtCheck = c.sendCompletions;
                c.stalledSinceNs = 0;
                return 0;
            }
            if (c.stalledSinceNs == 0) {
                c.stalledSinceNs = nowNs;
                return 0;
            }
            if (nowNs - c.stalledSinceNs < sendStallNs) {
                return 0;
            }
            long stalledMs = TimeUnit.NANOSECONDS.toMillis(nowNs - c.stalledSinceNs);
            sendsStalled++;
            LOG.warn("rdma transport of bus '{}': {} has had sends in flight ({} unreleased data sends, control in flight: {}) "
                    + "and no send completion for {} ms (rdma.send.stall.ms={}); closing the connection, seeds redial and RELIABLE "
                    + "subscribers resume", context.busName(), c, c.unreleasedSends(), anyControlInFlight(c), stalledMs, config.sendStallMs());
            fail(c, null);
            return 1;
        }

        /**
         * Reports (once per step) a cm-thread step that has taken longer than {@code rdma.connect.timeout.ms} + 10 s, with
         * the thread's stack: every cm step that waits is bounded by that timeout, so such a step is stuck in a kernel
         * call, and meanwhile this node neither dials nor accepts anyone. Only a report: the thread cannot be unblocked.
         */
        private void checkCmProgress(final long nowNs) {
            long since = cmStepSinceNs;
            if (since == 0 || since == cmStallReportedForNs || nowNs - since < cmStepLimitNs) {
                return;
            }
            cmStallReportedForNs = since;
            cmStalls++;
            Thread t = cmThread;
            StringBuilder stack = new StringBuilder();
            if (t != null) {
                StackTraceElement[] frames = t.getStackTrace();
                for (int i = 0; i < Math.min(frames.length, 16); i++) {
                    stack.append("\n\tat ").append(frames[i]);
                }
            }
            LOG.warn("rdma transport of bus '{}': the cm thread has been {} {} for {} ms (bound: rdma.connect.timeout.ms={} + 10 s); no "
                    + "dial or accept can happen until it returns; its stack:{}", context.busName(), cmStep, cmStepPeer,
                    TimeUnit.NANOSECONDS.toMillis(nowNs - since), config.connectTimeoutMs(), stack);
        }

        private int flushControl(final Connection c, final boolean idle, final boolean keepalive) {
            if (c.closed) {
                return 0;
            }
            int sent = 0;
            if (c.expectedProof != null) {
                // acceptor waiting for the connector's AUTH: grant nothing (no INIT = no credits, no SUB) until then
                if (System.nanoTime() - c.authDeadlineNs > 0) {
                    refused(c.peer, "no AUTH within " + config.connectTimeoutMs() + " ms");
                    fail(c, null);
                }
                return 0;
            }
            if (c.proofToSend != null) {
                if (!sendAuth(c)) {
                    return 0;
                }
                c.proofToSend = null;
                sent++;
            }
            if (!c.initSent) {
                if (!sendControl(c, Wire.INIT, config.dataCredits(), config.maxFrameBytes())) {
                    return 0;
                }
                c.initSent = true;
                sent++;
            }
            long[] m;
            while ((m = c.pendingControl.peek()) != null) {
                boolean ok = m[0] == Wire.RESUME || m[0] == Wire.RESUME_FAILED ? sendResumeMessage(c, m)
                        : sendControl(c, (int) m[0], (int) m[1], m.length > 2 ? (int) m[2] : 0, m.length > 3 ? (int) m[3] : 0);
                if (!ok) {
                    return sent;
                }
                c.pendingControl.poll();
                sent++;
            }
            int threshold = Math.max(1, config.dataCredits() / 4);
            // batch credits (a CREDIT costs a send and two completions); an idle poller returns what it has at once
            // quiet with unsignalled data sends whose completion never comes (no new post since the last quiet check,
            // so the publisher stopped rather than paused): a signalled CREDIT, possibly of 0, releases them
            boolean tail = false;
            if (idle) {
                long posted = c.postedSends();
                tail = posted == c.postedAtLastQuiet && !anyControlInFlight(c) && c.unreleasedSends() > 0;
                c.postedAtLastQuiet = posted;
            }
            if (c.creditsToReturn >= threshold || (c.creditsToReturn > 0 && idle) || tail) {
                if (sendControl(c, Wire.CREDIT, c.creditsToReturn, 0)) {
                    creditSends++;
                    c.creditsToReturn = 0;
                    sent++;
                }
            } else if (keepalive && sent == 0 && !anyControlInFlight(c) && c.unreleasedSends() == 0) {
                // nothing in flight: a peer gone without a word (link down, host lost, its QP failed while its DREQ could
                // not get through) would never be noticed, and a publisher out of its credits would wait forever; a
                // signalled CREDIT (of what is owed, maybe 0) fails with RETRY_EXC_ERR after the RC retries if nobody answers
                if (sendControl(c, Wire.CREDIT, c.creditsToReturn, 0)) {
                    keepaliveSends++;
                    c.creditsToReturn = 0;
                    sent++;
                }
            }
            return sent;
        }

        /** RESUME (24 bytes) or RESUME_FAILED (32 bytes) from a pending entry {type, topic, session, arg3, next[, oldest]}. */
        private boolean sendResumeMessage(final Connection c, final long[] m) {
            int slot = freeControlSlot(c);
            if (slot < 0) {
                return false;
            }
            int base = slot * Wire.CONTROL_BYTES;
            c.ctrlView.putInt(base + Wire.TYPE_OFFSET, (int) m[0], ByteOrder.LITTLE_ENDIAN);
            c.ctrlView.putInt(base + Wire.ARG_OFFSET, (int) m[1], ByteOrder.LITTLE_ENDIAN);
            c.ctrlView.putInt(base + Wire.ARG2_OFFSET, (int) m[2], ByteOrder.LITTLE_ENDIAN);
            c.ctrlView.putInt(base + Wire.ARG3_OFFSET, (int) m[3], ByteOrder.LITTLE_ENDIAN);
            c.ctrlView.putLong(base + Wire.NEXT_SEQUENCE_OFFSET, m[4], ByteOrder.LITTLE_ENDIAN);
            if (m[0] == Wire.RESUME_FAILED) {
                c.ctrlView.putLong(base + Wire.OLDEST_SEQUENCE_OFFSET, m[5], ByteOrder.LITTLE_ENDIAN);
            }
            return postControl(c, slot, m[0] == Wire.RESUME ? Wire.RESUME_BYTES : Wire.RESUME_FAILED_BYTES);
        }

        private boolean sendAuth(final Connection c) {
            int slot = freeControlSlot(c);
            if (slot < 0) {
                return false;
            }
            int base = slot * Wire.CONTROL_BYTES;
            c.ctrlView.putInt(base + Wire.TYPE_OFFSET, Wire.AUTH, ByteOrder.LITTLE_ENDIAN);
            c.ctrlView.putInt(base + Wire.ARG_OFFSET, 0, ByteOrder.LITTLE_ENDIAN);
            c.ctrlView.putBytes(base + Wire.ENVELOPE_BYTES, c.proofToSend);
            return postControl(c, slot, Wire.AUTH_BYTES);
        }

        private boolean anyControlInFlight(final Connection c) {
            for (boolean busy : c.ctrlBusy) {
                if (busy) {
                    return true;
                }
            }
            return false;
        }

        private int freeControlSlot(final Connection c) {
            for (int i = 0; i < c.ctrlBusy.length; i++) {
                if (!c.ctrlBusy[i]) {
                    return i;
                }
            }
            return -1;
        }

        private boolean sendControl(final Connection c, final int type, final int arg, final int arg2) {
            return sendControl(c, type, arg, arg2, 0);
        }

        private boolean sendControl(final Connection c, final int type, final int arg, final int arg2, final int arg3) {
            int slot = -1;
            for (int i = 0; i < c.ctrlBusy.length; i++) {
                if (!c.ctrlBusy[i]) {
                    slot = i;
                    break;
                }
            }
            if (slot < 0) {
                return false;
            }
            int base = slot * Wire.CONTROL_BYTES;
            c.ctrlView.putInt(base + Wire.TYPE_OFFSET, type, ByteOrder.LITTLE_ENDIAN);
            c.ctrlView.putInt(base + Wire.ARG_OFFSET, arg, ByteOrder.LITTLE_ENDIAN);
            c.ctrlView.putInt(base + Wire.ARG2_OFFSET, arg2, ByteOrder.LITTLE_ENDIAN);
            c.ctrlView.putInt(base + Wire.ARG3_OFFSET, arg3, ByteOrder.LITTLE_ENDIAN);
            return postControl(c, slot, Wire.CONTROL_MESSAGE_BYTES);
        }

        private boolean postControl(final Connection c, final int slot, final int lengthBytes) {
            int base = slot * Wire.CONTROL_BYTES;
            c.ctrlBusy[slot] = true;
            controlSends++;
            c.outstandingSends.incrementAndGet();
            int rc;
            try {
                synchronized (c.postLock) {
                    c.ctrlRequest.prepareSend(WorkRequestId.of(c.id, WorkRequestId.KIND_CTRL_SEND, 0, slot), c.ctrlMr, base, lengthBytes, true);
                    if (lengthBytes <= c.maxInlineBytes) {
                        c.ctrlRequest.inline();
                    }
                    rc = c.qp.postSend(c.ctrlRequest);
                    if (rc == 0) {
                        c.controlSendPosted(slot);
                    }
                }
            } catch (RuntimeException e) {
                rc = -1;
            }
            if (rc != 0) {
                c.ctrlBusy[slot] = false;
                c.outstandingSends.decrementAndGet();
                if (rc != 12) { // ENOMEM: send queue full, retry later
                    fail(c, new TransportException(c + ": posting a control message failed: " + rc));
                }
                return false;
            }
            return true;
        }

        void addConnection(final Connection c) {
            if (c.closed) {
                return;
            }
            active.add(c);
            if (ud != null) {
                c.pendingControl.add(new long[] {Wire.UD_INFO, ud.qpn, ud.ipv4, ud.qkey}); // UD path: before any SUB
            }
            long resumesBefore = resumesRequested;
            requestResume(c); // RESUME before the SUB of its topic: the publisher replays before it routes new frames
            long subDelayMs = subDelayAfterResumeMsForTest;
            if (subDelayMs > 0 && resumesRequested > resumesBefore) {
                int[] topics = local.keySet().stream().mapToInt(Integer::intValue).toArray();
                CompletableFuture.delayedExecutor(subDelayMs, TimeUnit.MILLISECONDS).execute(() -> pollerProxy.run(() -> {
                    if (c.closed) {
                        return;
                    }
                    for (int topicId : topics) {
                        c.pendingControl.add(new long[] {Wire.SUB, topicId});
                    }
                    flushControl(c, true, false);
                }));
            } else {
                for (int topicId : local.keySet()) {
                    c.pendingControl.add(new long[] {Wire.SUB, topicId});
                }
            }
            flushControl(c, true, false);
            c.admitted = true;
            for (int i = 0; i < c.earlyCount && !c.closed; i++) {
                onReceive(c, c.earlySlot[i], c.earlyLength[i]); // what the peer sent before it was verified, in order
            }
            c.earlyCount = 0;
        }

        void addLocal(final RdmaSubscription sub) {
            int topicId = sub.topic.topicId();
            RdmaSubscription[] cur = local.get(topicId);
            if (cur == null) {
                local.put(topicId, new RdmaSubscription[] {sub});
                for (Connection c : active) {
                    c.pendingControl.add(new long[] {Wire.SUB, topicId});
                }
            } else {
                RdmaSubscription[] next = java.util.Arrays.copyOf(cur, cur.length + 1);
                next[cur.length] = sub;
                local.put(topicId, next);
            }
        }

        void removeLocal(final RdmaSubscription sub) {
            int topicId = sub.topic.topicId();
            RdmaSubscription[] cur = local.get(topicId);
            if (cur == null) {
                return;
            }
            List<RdmaSubscription> keep = new ArrayList<>();
            for (RdmaSubscription s : cur) {
                if (s != sub) {
                    keep.add(s);
                }
            }
            if (keep.isEmpty()) {
                local.remove(topicId);
                for (Connection c : active) {
                    c.pendingControl.add(new long[] {Wire.UNSUB, topicId});
                    forgetTopic(c.consumed, topicId); // a later subscription starts afresh, it does not resume this one
                }
                for (ResumeState st : resumeByNode.values()) {
                    forgetTopic(st.next, topicId);
                }
            } else {
                local.put(topicId, keep.toArray(new RdmaSubscription[0]));
            }
        }

        /** Stops using {@code c}, forgets its held frames and routes, and hands it to the cm agent to destroy. */
        void fail(final Connection c, final Throwable cause) {
            if (c.closed) {
                return;
            }
            c.closed = true;
            active.remove(c);
            c.heldSize = 0;
            if (c.peerNodeId != 0 && !c.consumed.isEmpty() && !closed) {
                // held frames are dropped with the connection; consumed says where a reconnect resumes
                resumeByNode.put(c.peerNodeId, new ResumeState(c.consumed, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.retentionResumeMs())));
            }
            for (TopicRoute r : routes.values()) {
                r.remove(c);
            }
            if (ud != null) {
                ud.forget(c); // UD path
            }
            if (cause != null) {
                context.errorHandler().accept(cause);
            }
            if (!closed) {
                cmProxy.destroy(c);
            }
        }

        // ------------------------------------------------------------------------------------------ retention and resume

        /** Subscriber: {@code c}'s sinks all took a RELIABLE frame; remember where its session resumes. No allocation. */
        private void recordConsumed(final Connection c, final int topicId, final int frame, final int frameLength) {
            if (frameLength < FrameHeader.LENGTH || FrameHeader.validate(c.recvView, frame, frameLength, config.maxFrameBytes()) != FrameHeader.VALID) {
                return;
            }
            c.consumed.put(resumeKey(topicId, FrameHeader.sessionId(c.recvView, frame)), FrameHeader.sequence(c.recvView, frame) + 1);
        }

        /** Subscriber: a new connection to a node we lost within rdma.retention.resume.ms asks to resume every RELIABLE stream. */
        private void requestResume(final Connection c) {
            long now = System.nanoTime();
            resumeByNode.values().removeIf(st -> now - st.expiresAtNs > 0);
            ResumeState st = c.peerNodeId == 0 ? null : resumeByNode.remove(c.peerNodeId);
            if (st == null) {
                return;
            }
            c.consumed = st.next; // a second break before the replay ends still knows where to resume
            List<Long> stale = new ArrayList<>();
            Long2LongHashMap.EntryIterator it = st.next.entrySet().iterator();
            while (it.hasNext()) {
                it.next();
                long key = it.getLongKey();
                int topicId = (int) (key >>> 32);
                RdmaSubscription[] subs = local.get(topicId);
                if (subs == null || subs.length == 0 || subs[0].topic.delivery() != Delivery.RELIABLE) {
                    stale.add(key);
                    continue;
                }
                c.pendingControl.add(new long[] {Wire.RESUME, topicId, (int) key, 0, it.getLongValue()});
                resumesRequested++;
            }
            for (long key : stale) {
                st.next.remove(key);
            }
        }

        /** Publisher: a reconnected subscriber asks for session {@code session} of {@code topicId} from {@code next} on. */
        private void onResume(final Connection c, final int topicId, final int session, final long next) {
            RdmaPublication pub = null;
            synchronized (publications) {
                for (RdmaPublication p : publications) {
                    if (p.retains() && p.topicId() == topicId && p.ownsSession(session) && !p.isClosing()) {
                        pub = p;
                        break;
                    }
                }
            }
            if (pub == null) {
                refuseResume(c, topicId, session, next, -1);
                return;
            }
            pub.beginReplay(); // from here the publication claims nothing new; stepReplay waits for a claim in progress
            replays.add(new Replay(pub, c, topicId, session, next));
        }

        private void refuseResume(final Connection c, final int topicId, final int session, final long next, final long oldest) {
            resumesRefused++;
            c.pendingControl.add(new long[] {Wire.RESUME_FAILED, topicId, session, config.retentionFrames(), next, oldest});
            flushControl(c, false, false); // before any new frame of the topic reaches the subscriber
        }

        /** @return whether a replay for {@code topicId} to {@code c} is pending */
        private boolean replayPending(final Connection c, final int topicId) {
            for (int i = 0; i < replays.size(); i++) {
                Replay r = replays.get(i);
                if (r.c == c && r.topicId == topicId) {
                    return true;
                }
            }
            return false;
        }

        /**
         * Publisher: advances one replay. Arms it once the publisher is not between claim and commit (the ring is
         * stable from then on), checks the window, then re-posts retained frames from {@code next} on, each under a
         * credit of the subscriber's connection; without a credit it waits for the next CREDIT.
         *
         * @return work done
         */
        private int stepReplay(final Replay r) {
            if (r.c.closed || r.pub.isClosing()) {
                return finishReplay(r);
            }
            if (!r.armed) {
                if (r.pub.claimInProgress()) {
                    return 0;
                }
                long oldest = r.pub.oldestRetainedCommit();
                long end = r.pub.commits();
                if (oldest > 0 && r.pub.sequenceOfCommit(oldest) > r.next) {
                    // frames next .. oldest-1 were overwritten: the subscriber must learn it, not get a silent gap
                    refuseResume(r.c, r.topicId, r.session, r.next, r.pub.sequenceOfCommit(oldest));
                    return finishReplay(r) + 1;
                }
                long k = oldest;
                while (k < end && r.pub.sequenceOfCommit(k) < r.next) {
                    k++;
                }
                r.k = k;
                r.end = end;
                r.armed = true;
                resumesServed++;
            }
            int posted = 0;
            while (r.k < r.end) {
                if (!r.c.live()) {
                    return finishReplay(r) + posted;
                }
                if (!r.c.tryTakeCredit()) {
                    return posted;
                }
                if (!r.pub.replay(r.c, r.k)) {
                    r.c.credits.incrementAndGet();
                    fail(r.c, null);
                    return finishReplay(r) + posted;
                }
                r.k++;
                posted++;
                framesReplayed++;
            }
            return finishReplay(r) + posted;
        }

        /**
         * Ends a replay. The subscriber's RESUME is its subscription to the topic (it asks only for topics it subscribes,
         * and its SUB follows): the route is added here whether or not that SUB has arrived yet, and before the
         * publication may claim again. Otherwise a frame committed between the replay's end and the route (or the SUB's
         * arrival, which can come in a later completion batch) reaches every subscriber but this one: a RELIABLE gap
         * (soak-long-20261122T211441Z: one trade, reported as lostBefore).
         */
        private int finishReplay(final Replay r) {
            replays.remove(r);
            if (!r.c.closed && !replayPending(r.c, r.topicId)) {
                r.c.deferredSubs.remove(r.topicId);
                if (!r.c.unsubscribedDuringReplay.remove(r.topicId)) {
                    route(r.topicId).add(r.c);
                }
            }
            r.pub.endReplay(); // after the route: a claim that sees the replay over also sees this subscriber
            return 1;
        }

        /** Subscriber: the publisher cannot resume a stream: fail the topic's local sinks with a typed error. */
        private void onResumeFailed(final Connection c, final int topicId, final int session, final int retentionFrames, final long next,
                                    final long oldest) {
            resumeFailuresReceived++;
            c.consumed.remove(resumeKey(topicId, session));
            RdmaSubscription[] subs = local.get(topicId);
            if (subs == null) {
                return;
            }
            String topicName = subs[0].topic.name();
            String why = oldest < 0
                    ? "the publisher no longer has that session (its publication was closed)"
                    : "the publisher retains sequences from " + oldest + " on (" + RdmaTransportConfig.RETENTION_FRAMES + "=" + retentionFrames
                    + " on the publisher), so " + (oldest - next) + " frames (" + next + ".." + (oldest - 1) + ") are lost";
            String message = "topic " + topicName + ": cannot resume publisher session " + session + " of " + c.peer + " at sequence " + next
                    + " after a reconnect: " + why + "; raise " + RdmaTransportConfig.RETENTION_FRAMES + " on the publisher for longer outages"
                    + " or slower subscribers, then subscribe again";
            for (RdmaSubscription s : subs) {
                if (!s.closed) {
                    s.sink.onTransportError(new RetentionExceededException(message, session, next, oldest));
                }
            }
        }

        void sayGoodbye() {
            for (Connection c : active) {
                sendControl(c, Wire.BYE, 0, 0);
            }
        }

        @Override
        public void onClose() {
            for (RdmaSubscription[] subs : local.values()) {
                for (RdmaSubscription s : subs) {
                    s.closed = true;
                }
            }
            wcs.close();
        }

        @Override
        public String roleName() {
            return roleName;
        }
    }

    /** @return the resume-state key of a RELIABLE stream: topic id in the high half, the publisher's session id in the low */
    static long resumeKey(final int topicId, final int sessionId) {
        return ((long) topicId << 32) | (sessionId & 0xFFFF_FFFFL);
    }

    private static void forgetTopic(final Long2LongHashMap m, final int topicId) {
        Long2LongHashMap.KeyIterator it = m.keySet().iterator();
        while (it.hasNext()) {
            if ((int) (it.nextValue() >>> 32) == topicId) {
                it.remove();
            }
        }
    }

    /** Subscriber side: where each RELIABLE stream of a lost peer resumes, and until when it is kept. */
    private record ResumeState(Long2LongHashMap next, long expiresAtNs) {
    }

    /** Failed dials of one seed since its last connection (cm thread). */
    private static final class DialFailures {
        long inARow;
        /** Failures in a row that were timeouts without any cm event. */
        int silentInARow;
        String lastReason;
    }

    /** Publisher side: one reconnected subscriber's replay of one session (poller). */
    private static final class Replay {
        final RdmaPublication pub;
        final Connection c;
        final int topicId;
        final int session;
        final long next;
        boolean armed;
        /** Next commit index to re-post, and the end (exclusive), once armed. */
        long k;
        long end;

        Replay(final RdmaPublication pub, final Connection c, final int topicId, final int session, final long next) {
            this.pub = pub;
            this.c = c;
            this.topicId = topicId;
            this.session = session;
            this.next = next;
        }
    }

    // ------------------------------------------------------------------------------------------------ cm agent

    /** An endpoint the cm agent dials (again after failures, with backoff) while it has no live connection to it. */
    private static final class DialTarget {
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

    /**
     * Connection management: accepts peers, connects to seeds and to discovered advertisers (with backoff), destroys
     * failed connections; with {@code rdma.discovery=multicast} also sends this node's adverts and verifies received ones.
     */
    private final class CmAgent implements Agent {
        private final String roleName;
        /** Seeds first (for ever), then discovered advertisers (while wanted and heard). */
        private final List<DialTarget> targets = new ArrayList<>();
        /** Discovered targets by the advertiser's node id. */
        private final Long2ObjectHashMap<DialTarget> discovered = new Long2ObjectHashMap<>();
        private final DiscoveryTable advertisers = new DiscoveryTable(
                TimeUnit.MILLISECONDS.toNanos(config.discovery().intervalMs() * DiscoveryConfig.EXPIRY_INTERVALS));
        private final long advertIntervalNs = TimeUnit.MILLISECONDS.toNanos(config.discovery().intervalMs());
        private long nextAdvertNs;
        private long lastAdvertNs;
        private final int[] decodeResult = new int[1];
        private long lastAdvertRejectLogNs = System.nanoTime() - REFUSAL_LOG_INTERVAL_NS;
        private boolean topicsOmittedLogged;
        // discovery counters (cm thread writes, read racily)
        volatile long advertsSent;
        volatile long advertsReceived;
        volatile long advertsRejected;
        volatile long advertsMalformed;
        volatile long advertsDropped;
        volatile long advertTopicsOmitted;
        volatile long discoveryDials;
        /** Advertisers known now (heard within the expiry time). */
        volatile int discoveredPeers;
        /** Established connections by the peer's node id: one per node pair. */
        private final java.util.HashMap<Long, Connection> byNode = new java.util.HashMap<>();
        /** The connections in {@link #byNode}, watched for DISCONNECTED (see noticeDisconnects). */
        private final List<Connection> watched = new ArrayList<>();
        private long cmCycles;
        /** Failed dials in a row, per seed (logged at 1, 10, 100, ...: a seed down for long is not a log flood). */
        private final java.util.HashMap<InetSocketAddress, DialFailures> dialFailures = new java.util.HashMap<>();
        /** The port was found down when a dial was due: dials wait (logged once per down period). */
        private boolean dialsHeldForPort;
        /** Runs one command of {@link #cmProxy} as a cm step (a field: an idle cycle allocates nothing). */
        private final Consumer<Runnable> runCommand = cmd -> {
            cmStep("running a command", "");
            cmd.run();
            cmStepDone();
        };

        CmAgent(final String roleName, final List<InetSocketAddress> seeds) {
            this.roleName = roleName;
            for (InetSocketAddress seed : seeds) {
                targets.add(new DialTarget(seed, 0));
            }
        }

        @Override
        public void onStart() {
            cmThread = Thread.currentThread();
            nextAdvertNs = System.nanoTime(); // the first advert at once
            lastAdvertNs = nextAdvertNs - MIN_ADVERT_GAP_NS;
        }

        @Override
        public int doWork() {
            int work = cmProxy.drain(runCommand);
            work += noticeDisconnects();
            if ((cmCycles++ & 7) == 0) {
                work += destroyIdsAwaitingPort(); // a sysfs read every 8th cycle (~200 ms), only while ids wait
            }
            CmId.Request request;
            try {
                request = listener.awaitConnectRequest(CM_WAIT_MS); // sleeps in poll(2): connects are rare, not worth a spin
            } catch (RuntimeException e) {
                context.errorHandler().accept(e);
                request = null;
            }
            if (request != null) {
                accept(request);
                work++;
            }
            if (config.discovery().multicast()) {
                work += discoveryDuty();
            }
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
                        discoveryDials++;
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

        // -------------------------------------------------------------------------------------- discovery (cm thread)

        /** Verifies received adverts, advertises every interval (or at once after a new publication), forgets the silent. */
        private int discoveryDuty() {
            int work = 0;
            byte[] datagram;
            while ((datagram = ud.adverts().poll()) != null) {
                onAdvert(datagram);
                work++;
            }
            long now = System.nanoTime();
            // a new publication advertises at once, but a burst of them at most every MIN_ADVERT_GAP_NS
            if (now - nextAdvertNs >= 0 || advertSoon && now - lastAdvertNs >= MIN_ADVERT_GAP_NS) {
                advertSoon = false;
                lastAdvertNs = now;
                nextAdvertNs = now + advertIntervalNs;
                sendAdverts();
                List<DiscoveryTable.Advertiser> expired = advertisers.expire(now);
                discoveredPeers = advertisers.size();
                for (DiscoveryTable.Advertiser gone : expired) {
                    if (forget(gone.nodeId) != null) {
                        LOG.info("rdma transport of bus '{}': discovered node {} at {} not heard for {} intervals of {} ms: no more dials to it{}",
                                context.busName(), Long.toHexString(gone.nodeId), gone.endpoint(), DiscoveryConfig.EXPIRY_INTERVALS,
                                config.discovery().intervalMs(), liveByNode(gone.nodeId) != null ? " (its live connection stays)" : "");
                    }
                }
                work++;
            }
            return work;
        }

        /** One received advert (a copy the poller took): verify, record, dial its node if it publishes what we subscribe. */
        private void onAdvert(final byte[] datagram) {
            Advert.Decoded a = Advert.decode(datagram, datagram.length, config.auth().key(), config.ud().domain(), decodeResult);
            if (a == null) {
                if (decodeResult[0] == Advert.REJECTED) {
                    advertsRejected++;
                    long now = System.nanoTime();
                    if (now - lastAdvertRejectLogNs >= REFUSAL_LOG_INTERVAL_NS) {
                        lastAdvertRejectLogNs = now;
                        LOG.warn("rdma transport of bus '{}': dropped a discovery advert without a valid bus-secret MAC ({} in all): a node on the "
                                + "fabric has another {} or none", context.busName(), advertsRejected, AuthConfig.SECRET_FILE);
                    }
                } else {
                    advertsMalformed++;
                }
                return;
            }
            if (a.nodeId() == nodeId) {
                return; // our own, looped back (the poller drops most of them already)
            }
            advertsReceived++;
            DiscoveryTable.Advertiser e = advertisers.onAdvert(a, System.nanoTime());
            discoveredPeers = advertisers.size();
            if (e == null) {
                advertsDropped++; // the table is full
                return;
            }
            boolean wanted = e.publishesAny(subscribedTopics::containsKey);
            DialTarget t = discovered.get(e.nodeId);
            if (wanted && t == null) {
                want(e);
            } else if (!wanted && t != null && e.pages.length == 1) {
                // nothing here subscribes what it publishes any more: stop (re)dialling it; a live connection stays.
                // (With several pages one page alone cannot tell, so such a target stays until it expires.)
                forget(e.nodeId);
            }
        }

        /** Stops (re)dialling a discovered advertiser; a live connection to it stays. @return its target, or null */
        private DialTarget forget(final long advertiserNodeId) {
            DialTarget t = discovered.remove(advertiserNodeId);
            if (t != null) {
                targets.remove(t);
                dialFailures.remove(t.endpoint);
            }
            return t;
        }

        /** A local subscription to {@code topicId} was added: dial the advertisers of that topic we have no target for. */
        void onSubscribed(final int topicId) {
            for (DiscoveryTable.Advertiser e : advertisers.publishersOf(topicId)) {
                if (!discovered.containsKey(e.nodeId)) {
                    want(e);
                }
            }
        }

        private void want(final DiscoveryTable.Advertiser e) {
            InetSocketAddress endpoint = new InetSocketAddress(UdEndpoint.inet(e.ipv4), e.port);
            for (DialTarget seed : targets) {
                if (seed.nodeId == 0 && seed.endpoint.equals(endpoint)) {
                    return; // a seed already dials it, for ever
                }
            }
            DialTarget t = new DialTarget(endpoint, e.nodeId);
            discovered.put(e.nodeId, t);
            targets.add(t);
            LOG.info("rdma transport of bus '{}': discovered node {} at {} publishing topics this node subscribes{}", context.busName(),
                    Long.toHexString(e.nodeId), e.endpoint(), liveByNode(e.nodeId) != null ? " (already connected)" : "; dialling it");
        }

        /** Multicasts this node's advert: its endpoint and published topics, in pages of what one datagram holds. */
        private void sendAdverts() {
            java.util.TreeSet<Integer> topics = new java.util.TreeSet<>();
            synchronized (publications) {
                for (RdmaPublication p : publications) {
                    topics.add(p.topicId());
                }
            }
            ud.addPublishedTopics(topics);
            int[] ids = topics.stream().mapToInt(Integer::intValue).toArray();
            int perPage = Advert.maxTopicsPerAdvert(config.udPayloadBytes());
            int pages = Math.max(1, (ids.length + perPage - 1) / perPage);
            if (pages > Advert.MAX_PAGES) {
                advertTopicsOmitted = ids.length - (long) Advert.MAX_PAGES * perPage;
                pages = Advert.MAX_PAGES;
                if (!topicsOmittedLogged) {
                    topicsOmittedLogged = true;
                    LOG.warn("rdma transport of bus '{}': publishes {} topics, discovery adverts carry at most {} ({} pages of {}): {} are not "
                            + "advertised, so their subscribers need a seed list", context.busName(), ids.length, Advert.MAX_PAGES * perPage,
                            Advert.MAX_PAGES, perPage, advertTopicsOmitted);
                }
            } else {
                advertTopicsOmitted = 0;
            }
            java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(config.udPayloadBytes());
            int ipv4 = UdConfig.ipv4(bindIp);
            for (int page = 0; page < pages; page++) {
                int from = page * perPage;
                int count = Math.max(0, Math.min(perPage, ids.length - from));
                int length = Advert.encode(out, nodeId, ipv4, listenPort, page, pages, ids, from, count, config.auth().key(), config.ud().domain());
                if (ud.sendAdvert(page, out.array(), length)) {
                    advertsSent++;
                }
            }
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
            } else if (req.nodeId() == nodeId) {
                refuse = "it claims this node's own id";
            }
            if (refuse != null) {
                refused(peer, refuse);
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
                LOG.info("rdma transport of bus '{}': {} dialled again; closing its previous connection {}", context.busName(), peer, existing);
                byNode.remove(req.nodeId());
                watched.remove(existing);
                connectionsReplaced++;
                pollerProxy.fail(existing);
            }
            Connection c = null;
            cmStep("accepting", peer);
            try {
                c = buildConnection(id, null, peer);
                c.acceptedHere = true;
                c.peerNodeId = req.nodeId();
                c.peerEndpoint = req.listenEndpoint();
                byte[] nonce = PeerAuth.nonce();
                byte[] proof = null;
                if (config.auth().enabled()) {
                    proof = PeerAuth.proof(config.auth().key(), PeerAuth.ROLE_ACCEPTOR, nodeId, req.nodeId(), req.nonce(), nonce);
                    c.expectedProof = PeerAuth.proof(config.auth().key(), PeerAuth.ROLE_CONNECTOR, req.nodeId(), nodeId, nonce, req.nonce());
                    c.authDeadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.connectTimeoutMs());
                }
                int flags = config.auth().enabled() ? PeerAuth.FLAG_SECRET : 0;
                id.accept(PeerAuth.reply(flags, nodeId, nonce, proof), config.connectTimeoutMs());
                c.established = true;
                byNode.put(req.nodeId(), c);
                watched.add(c);
                Connection added = c;
                pollerProxy.addConnection(added);
            } catch (RuntimeException e) {
                if (c != null) {
                    destroy(c);
                } else {
                    closeQuietly(id);
                }
                // Not an error of this bus: mostly the peer gave up on this request (its connect step timed out while
                // the request waited here, errno 22 from rdma_accept) and dials again with backoff.
                LOG.warn("rdma transport of bus '{}': accepting the connection of {} failed ({}; the request waited {} ms before this node took "
                        + "it, the accept took {} ms); the peer dials again", context.busName(), peer, e.getMessage(),
                        (startNs - request.readAtNs()) / 1_000_000, (System.nanoTime() - startNs) / 1_000_000);
            } finally {
                cmStepDone();
            }
        }

        private void rejectQuietly(final CmId id) {
            try {
                id.reject(null);
            } catch (RuntimeException ignored) {
                // the peer gives up on its own
            }
            closeQuietly(id);
        }

        private Connection connect(final InetSocketAddress seed) {
            long startNs = System.nanoTime();
            long connectAtNs = 0;
            CmId id = null;
            Connection c = null;
            String peer = seed.getAddress().getHostAddress() + ":" + seed.getPort();
            try {
                cmStep("resolving the address of", peer);
                id = CmId.create(activeChannel, CmId.PortSpace.TCP);
                id.resolveAddress(new InetSocketAddress(InetAddress.getByName(bindIp), 0), seed, config.connectTimeoutMs());
                cmStep("resolving the route to", peer);
                id.resolveRoute(config.connectTimeoutMs());
                cmStep("setting up the QP and buffers for", peer);
                c = buildConnection(id, null, peer);
                byte[] nonce = PeerAuth.nonce();
                int flags = config.auth().enabled() ? PeerAuth.FLAG_SECRET : 0;
                connectAtNs = System.nanoTime();
                cmStep("connecting to", peer);
                byte[] reply = id.connectForReply(PeerAuth.request(flags, nodeId, InetAddress.getByName(bindIp).getAddress(), listenPort, nonce),
                        config.connectTimeoutMs());
                c.established = true;
                PeerAuth.Reply rep = PeerAuth.parseReply(reply);
                String refuse = null;
                if (rep == null) {
                    refuse = "its accept reply is not an rdma-bus one (another protocol or version)";
                } else if (rep.nodeId() == nodeId) {
                    refuse = "it claims this node's own id";
                } else if (config.auth().enabled()) {
                    byte[] expected = PeerAuth.proof(config.auth().key(), PeerAuth.ROLE_ACCEPTOR, rep.nodeId(), nodeId, nonce, rep.nonce());
                    if ((rep.flags() & PeerAuth.FLAG_SECRET) == 0) {
                        refuse = "it has no bus secret and this node requires one (" + AuthConfig.SECRET_FILE + ")";
                    } else if (!PeerAuth.matches(expected, rep.proof())) {
                        refuse = "wrong bus secret (its accept proof does not match)";
                    }
                }
                if (refuse != null) {
                    refused(peer, refuse);
                    destroy(c);
                    return null;
                }
                Connection existing = liveByNode(rep.nodeId());
                if (existing != null) {
                    // it reached us first (its request was accepted while we dialled): keep that one, nothing was sent here
                    destroy(c);
                    return existing;
                }
                c.peerNodeId = rep.nodeId();
                c.peerEndpoint = peer;
                if (config.auth().enabled()) {
                    c.proofToSend = PeerAuth.proof(config.auth().key(), PeerAuth.ROLE_CONNECTOR, nodeId, rep.nodeId(), rep.nonce(), nonce);
                }
                byNode.put(rep.nodeId(), c);
                watched.add(c);
                Connection added = c;
                pollerProxy.addConnection(added);
                DialFailures failed = dialFailures.remove(seed);
                if (failed != null) {
                    LOG.info("rdma transport of bus '{}': connected to {} after {} failed attempt(s)", context.busName(), peer, failed.inARow);
                }
                return c;
            } catch (UnknownHostException | RuntimeException e) {
                // REJECTED (nobody listens yet, or a duplicate), UNREACHABLE or a timeout: retried with backoff
                if (c != null) {
                    destroy(c);
                } else {
                    closeQuietly(id);
                }
                long nowNs = System.nanoTime();
                onDialFailure(seed, peer, e.getMessage() + (connectAtNs == 0 ? "" : " (resolve and QP set-up took "
                        + (connectAtNs - startNs) / 1_000_000 + " ms, the connect " + (nowNs - connectAtNs) / 1_000_000 + " ms)"),
                        e instanceof RdmaConnectException rce && rce.noEvent());
                return null;
            } finally {
                cmStepDone();
            }
        }

        /**
         * Whether dials may start now: not while the port is down, and only after the cm ids kept while it was down are
         * destroyed. On rxe (guest kernel 6.1) an rdma_cm handshake in flight when the link goes down leaves the device
         * deaf to unicast until it is re-created (lab/selftest/linkflap-cm.sh): a dial started while the port is down, or
         * in the moment it comes back, is such a handshake. The kept ids' DREQs go first, so they do not meet our REQs.
         */
        private boolean portReadyForDials() {
            if (deviceName != null && !RdmaDevices.portActive(deviceName, devicePort)) {
                if (!dialsHeldForPort) {
                    dialsHeldForPort = true;
                    LOG.info("rdma transport of bus '{}': port {}/{} is not ACTIVE; dials wait for it", context.busName(), deviceName, devicePort);
                }
                return false;
            }
            if (dialsHeldForPort) {
                dialsHeldForPort = false;
                LOG.info("rdma transport of bus '{}': port {}/{} is ACTIVE again; dialling", context.busName(), deviceName, devicePort);
            }
            destroyIdsKeptForPort(); // the port was just read ACTIVE: no second sysfs read
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
                        context.busName(), peer, n, why);
            }
            f.lastReason = reason;
            if (silent) {
                if (++f.silentInARow == SILENT_DIALS_BEFORE_HINT) {
                    LOG.warn("rdma transport of bus '{}': {} dials in a row to {} got no rdma_cm reply at all while port {}/{} is ACTIVE. If the "
                            + "peer is up, this host may not receive unicast RoCE packets: on rxe, an rdma_cm handshake in flight when the link "
                            + "went down leaves the device so until it is re-created (rdma link delete/add; docs/rdma-transport.md)",
                            context.busName(), SILENT_DIALS_BEFORE_HINT, peer, deviceName, devicePort);
                }
            } else {
                f.silentInARow = 0;
            }
        }

        @Override
        public String roleName() {
            return roleName;
        }
    }
}
