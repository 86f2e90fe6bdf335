package io.rdmabus.transport.tcp;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.resolver.DefaultAddressResolverGroup;
import io.rdmabus.BusConfigurationException;
import io.rdmabus.Delivery;
import io.rdmabus.TransportException;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportCapabilities;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportSubscription;

import org.agrona.collections.Int2ObjectHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.netty.DisposableServer;
import reactor.netty.tcp.TcpClient;
import reactor.netty.tcp.TcpServer;

/**
 * Broker-less TCP transport on reactor-netty: each node listens on {@link TcpTransportConfig#BIND} and dials every
 * seed of {@code discovery().endpoints("tcp")}. A connection is symmetric: after both hellos each side announces the
 * topics it subscribes, and a publication streams frames of its topic to every connected node that subscribed.
 * A lost connection to a seed is dialled again with capped exponential backoff; subscriptions are announced again on
 * every new connection. With a bus secret ({@link TcpTransportConfig#SECRET}) each side proves it before anything else
 * is accepted, and with {@link TcpTlsConfig#TLS} every connection runs mutual TLS; a peer that fails either is refused
 * and counted ({@link #refusedPeers()}). See {@code tcp-fallback/README.md} for the wire format, authentication and
 * delivery semantics.
 *
 * <p>Threads: one (or two, {@link TcpTransportConfig#IO_THREADS}) event loop threads named
 * {@code rdma-bus-tcp-io-<busName>-<n>}, owned by this transport and stopped by {@link #close()}.
 */
public final class TcpTransport implements Transport {
    private static final Logger LOG = LoggerFactory.getLogger(TcpTransport.class);
    private static final String HANDLER = "rdma-bus-tcp";
    private static final String TLS_HANDLER = "rdma-bus-tcp-tls";
    /** Whether the "no bus secret" warning was logged in this process (once at WARN, then at DEBUG). */
    private static final AtomicBoolean NO_SECRET_WARNED = new AtomicBoolean();
    private static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(32 * 1024, 64 * 1024);

    private final TcpTransportConfig config;
    private final long nodeId;
    private final TransportCapabilities capabilities;
    private final Object lock = new Object();

    // guarded by lock
    private final List<PeerConnection> connections = new ArrayList<>();
    private final Int2ObjectHashMap<TopicOut> outs = new Int2ObjectHashMap<>();
    private final Int2ObjectHashMap<TopicDescriptor> localTopics = new Int2ObjectHashMap<>();
    private final List<TcpPublication> publications = new ArrayList<>();
    private final List<Seed> seeds = new ArrayList<>();
    /** Handshaken connections so far per peer node id (a connection's {@code reconnects}), and the last connection id. */
    private final java.util.HashMap<Long, Long> connectionsByNode = new java.util.HashMap<>();
    private long lastConnectionId;
    /** Every channel with a handler, handshaken or not, so close() can reach connections still in their hello. */
    private final java.util.Set<PeerConnection> allChannels = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Copy-on-write: replaced under the lock, read without it on the event loop. */
    private volatile Int2ObjectHashMap<TcpSubscription[]> localSubscriptions = new Int2ObjectHashMap<>();

    private volatile boolean started;
    private volatile boolean closed;
    private String busName = "?";
    private TcpLoopResources loops;
    private DisposableServer server;
    private TcpClient client;

    private final AtomicLong protocolErrors = new AtomicLong();
    private final AtomicLong handshakeRejections = new AtomicLong();
    private final AtomicLong bestEffortDrops = new AtomicLong();
    private final AtomicLong framesQueued = new AtomicLong();
    private final AtomicLong framesWithoutSubscriber = new AtomicLong();
    private final AtomicLong connectAttempts = new AtomicLong();
    private final AtomicLong connectionsClosed = new AtomicLong();
    private final AtomicLong refusedPeers = new AtomicLong();
    private final AtomicLong handshakeTimeouts = new AtomicLong();
    /** One limiter for every line a remote peer can cause before its handshake completed, so it cannot flood the log. */
    private final LogLimiter peerLog = new LogLimiter();
    private volatile String lastRefusal;

    /** @param config settings (see {@link TcpTransportConfig#from}) */
    public TcpTransport(final TcpTransportConfig config) {
        this.config = config;
        long id;
        do {
            id = ThreadLocalRandom.current().nextLong();
        } while (id == 0);
        this.nodeId = id;
        this.capabilities = new TransportCapabilities(config.maxFrameBytes(), config.maxFrameBytes(), false, true);
    }

    @Override
    public String name() {
        return TcpTransportFactory.NAME;
    }

    @Override
    public TransportCapabilities capabilities() {
        return capabilities;
    }

    @Override
    public void start(final TransportContext context) {
        synchronized (lock) {
            if (started || closed) {
                throw new TransportException("tcp transport: start() called twice or after close(); use a new transport per bus");
            }
            started = true;
        }
        busName = context.busName();
        final List<InetSocketAddress> seedAddresses = new ArrayList<>();
        for (final String endpoint : context.discovery().endpoints(TcpTransportFactory.NAME)) {
            seedAddresses.add(TcpTransportConfig.parseEndpoint("tcp seed", endpoint));
        }
        loops = new TcpLoopResources(busName, config.ioThreads(), TimeUnit.MICROSECONDS.toNanos(config.ioSpinUs()));
        try {
            server = TcpServer.create()
                .runOn(loops)
                .host(config.bindHost())
                .port(config.bindPort())
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                .doOnChannelInit((observer, channel, remote) -> {
                    channel.pipeline().addFirst(HANDLER, new PeerConnection(this, null));
                    if (config.tls().enabled()) {
                        channel.pipeline().addFirst(TLS_HANDLER, config.tls().newServerHandler(channel.alloc()));
                    }
                })
                .handle((in, out) -> out.neverComplete())
                .bind()
                .block(Duration.ofSeconds(10));
        } catch (final RuntimeException ex) {
            disposeLoops();
            throw new TransportException("tcp transport of bus '" + busName + "' cannot listen on " + config.bindHost() + ":"
                + config.bindPort() + " (" + ex.getMessage() + "): change " + TcpTransportConfig.BIND, ex);
        }
        client = TcpClient.create()
            .runOn(loops)
            .resolver(DefaultAddressResolverGroup.INSTANCE)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, config.connectTimeoutMs()))
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK);
        LOG.info("tcp {}: listening on {}, node id {}, seeds {}, bus secret {}, TLS {}", busName, boundAddress(), Long.toHexString(nodeId),
            seedAddresses, config.secret(), config.tls());
        if (config.secret().unset()) {
            // once per process at WARN (a process may start many buses: tests, a bus host); the rest at DEBUG
            final boolean first = NO_SECRET_WARNED.compareAndSet(false, true);
            final String warning = "tcp {}: no bus secret set, so any process that reaches {} can join this bus; set {} (or {}) on every "
                + "node to authenticate peers, or {}=none to run without authentication and without this warning"
                + (first ? " (said once per process; other buses without a secret log it at DEBUG)" : "");
            final Object[] args = {busName, boundEndpoint(), TcpTransportConfig.SECRET_FILE, TcpTransportConfig.SECRET, TcpTransportConfig.SECRET};
            if (first) {
                LOG.warn(warning, args);
            } else {
                LOG.debug(warning, args);
            }
        }
        synchronized (lock) {
            for (final InetSocketAddress address : seedAddresses) {
                seeds.add(new Seed(address));
            }
        }
        for (final Seed seed : seeds) {
            seed.connect();
        }
    }

    /**
     * @return the address this node listens on (with the actual port when {@code tcp.bind} asked for port 0)
     * @throws IllegalStateException before {@link #start}
     */
    public InetSocketAddress boundAddress() {
        final DisposableServer s = server;
        if (s == null) {
            throw new IllegalStateException("tcp transport is not started");
        }
        return (InetSocketAddress) s.address();
    }

    /** @return {@code host:port} of {@link #boundAddress()}, as a seed for other nodes */
    public String boundEndpoint() {
        final InetSocketAddress address = boundAddress();
        return address.getHostString() + ":" + address.getPort();
    }

    @Override
    public TransportPublication addPublication(final TopicDescriptor topic) {
        checkUsable();
        final int maxFrame = capabilities.maxFrameLength(topic.delivery());
        synchronized (lock) {
            final TcpPublication publication = new TcpPublication(this, outFor(topic.topicId()), topic, maxFrame);
            publications.add(publication);
            return publication;
        }
    }

    @Override
    public TransportSubscription addSubscription(final TopicDescriptor topic, final SubscriptionSink sink) {
        checkUsable();
        if (sink == null) {
            throw new BusConfigurationException("tcp transport: addSubscription needs a sink");
        }
        final TcpSubscription subscription = new TcpSubscription(this, topic, sink);
        synchronized (lock) {
            final Int2ObjectHashMap<TcpSubscription[]> copy = new Int2ObjectHashMap<>(localSubscriptions);
            final TcpSubscription[] existing = copy.get(topic.topicId());
            if (existing == null) {
                copy.put(topic.topicId(), new TcpSubscription[] {subscription});
            } else {
                final TcpSubscription[] grown = Arrays.copyOf(existing, existing.length + 1);
                grown[existing.length] = subscription;
                copy.put(topic.topicId(), grown);
            }
            // Visible to the event loops before any peer hears of it: a publisher answers a subscribe with frames at
            // once, and a frame that found no local subscription was dropped (reliable loss, seen in the RS TCK).
            localSubscriptions = copy;
            if (existing == null) {
                localTopics.put(topic.topicId(), topic);
                for (final PeerConnection connection : connections) {
                    connection.send(subscribeMessage(topic));
                }
            }
        }
        return subscription;
    }

    private void checkUsable() {
        if (!started) {
            throw new TransportException("tcp transport is not started: the bus calls start() first");
        }
        if (closed) {
            throw new TransportException("tcp transport of bus '" + busName + "' is closed");
        }
    }

    private io.netty.buffer.ByteBuf subscribeMessage(final TopicDescriptor topic) {
        return TcpProtocol.subscribe(ByteBufAllocator.DEFAULT, topic.topicId(), topic.delivery() == Delivery.RELIABLE,
            config.topicWindowBytes(), topic.name());
    }

    void removeSubscription(final TcpSubscription subscription) {
        synchronized (lock) {
            final int topicId = subscription.topic.topicId();
            final TcpSubscription[] existing = localSubscriptions.get(topicId);
            if (existing == null) {
                return;
            }
            final TcpSubscription[] remaining = Arrays.stream(existing).filter(s -> s != subscription).toArray(TcpSubscription[]::new);
            final Int2ObjectHashMap<TcpSubscription[]> copy = new Int2ObjectHashMap<>(localSubscriptions);
            if (remaining.length == 0) {
                copy.remove(topicId);
                localTopics.remove(topicId);
                if (!closed) {
                    for (final PeerConnection connection : connections) {
                        connection.send(TcpProtocol.unsubscribe(ByteBufAllocator.DEFAULT, topicId));
                    }
                }
            } else {
                copy.put(topicId, remaining);
            }
            localSubscriptions = copy;
        }
    }

    void onPublicationClosed(final TcpPublication publication) {
        synchronized (lock) {
            publications.remove(publication);
        }
    }

    // ------------------------------------------------------------------ called by connections (event loop)

    TcpSubscription[] subscriptionsFor(final int topicId) {
        return localSubscriptions.get(topicId);
    }

    private TopicOut outFor(final int topicId) {
        TopicOut out = outs.get(topicId);
        if (out == null) {
            out = new TopicOut();
            outs.put(topicId, out);
        }
        return out;
    }

    void addRemoteSubscriber(final int topicId, final RemoteSubscriber subscriber) {
        synchronized (lock) {
            if (!subscriber.connection.isInactive()) {
                outFor(topicId).add(subscriber);
            }
        }
    }

    void removeRemoteSubscriber(final int topicId, final RemoteSubscriber subscriber) {
        synchronized (lock) {
            final TopicOut out = outs.get(topicId);
            if (out != null) {
                out.remove(subscriber);
            }
        }
    }

    /**
     * A peer's hello was valid: registers the connection and announces this node's subscriptions on it.
     *
     * @return false if the connection must be closed (to this node itself, a duplicate, or the transport is closing)
     */
    boolean onHandshake(final PeerConnection connection) {
        synchronized (lock) {
            if (closed) {
                return false;
            }
            if (connection.remoteNodeId == nodeId) {
                LOG.info("tcp {}: {} leads to this node itself; not dialling it again", busName, connection.describe());
                connection.rejected = true;
                return false;
            }
            for (final PeerConnection existing : connections) {
                if (existing.remoteNodeId == connection.remoteNodeId && !existing.isInactive()) {
                    // Two connections to one node (both dialled each other): both ends keep the one dialled by the lower id.
                    if (Long.compareUnsigned(connection.initiatorNodeId(), existing.initiatorNodeId()) >= 0) {
                        LOG.debug("tcp {}: {} duplicates {}; closing it", busName, connection.describe(), existing.describe());
                        connection.duplicate = true;
                        return false;
                    }
                    LOG.debug("tcp {}: {} replaces duplicate {}", busName, connection.describe(), existing.describe());
                    existing.duplicate = true;
                    connections.remove(existing);
                    existing.close();
                    break;
                }
            }
            if (connection.isInactive()) {
                return false; // closed while its hello was processed: onConnectionClosed has already run, so it must not be counted
            }
            connections.add(connection);
            connection.connectionId = ++lastConnectionId;
            final long earlier = connectionsByNode.merge(connection.remoteNodeId, 1L, Long::sum) - 1;
            connection.reconnects(earlier);
            localTopics.forEach((topicId, topic) -> connection.send(subscribeMessage(topic)));
        }
        if (connection.seed != null) {
            connection.seed.onConnected();
        }
        LOG.info("tcp {}: connected {}", busName, connection.describe());
        return true;
    }

    void onChannelAdded(final PeerConnection connection) {
        allChannels.add(connection);
        if (closed) {
            connection.close();
        }
    }

    void onChannelGone(final PeerConnection connection) {
        allChannels.remove(connection);
    }

    void onConnectionClosed(final PeerConnection connection) {
        final boolean wasRegistered;
        synchronized (lock) {
            wasRegistered = connections.remove(connection);
        }
        if (wasRegistered) {
            LOG.info("tcp {}: disconnected {}", busName, connection.describe());
        }
        connectionsClosed.incrementAndGet(); // after the removal: a reader that sees it sees the connection gone
        final Seed seed = connection.seed;
        if (seed != null && !closed) {
            if (connection.rejected && connection.remoteNodeId == nodeId) {
                return; // a seed that is this node itself
            }
            seed.scheduleRetry(connection.duplicate);
        }
    }

    void onProtocolError(final String peer, final String why) {
        protocolErrors.incrementAndGet();
        final String more = peerLog.admit();
        if (more != null) {
            LOG.warn("tcp {}: closing connection {}: {} ({} protocol errors in all{})", busName, peer, why, protocolErrors.get(), more);
        }
    }

    void onHandshakeRejected(final String why) {
        handshakeRejections.incrementAndGet();
        final String more = peerLog.admit();
        if (more != null) {
            LOG.error("tcp {}: {}{}", busName, why, more);
        }
    }

    /** A peer that did not authenticate (no or another bus secret, no AUTH, TLS refused): counted, logged rate-limited. */
    void onPeerRefused(final String peer, final String why) {
        lastRefusal = peer + ": " + why;
        refusedPeers.incrementAndGet();
        final String more = peerLog.admit();
        if (more != null) {
            LOG.warn("tcp {}: refused peer {}: {} ({} refusals in all{})", busName, peer, why, refusedPeers.get(), more);
        }
    }

    void onHandshakeTimeout(final String peer, final String why) {
        handshakeTimeouts.incrementAndGet();
        final String more = peerLog.admit();
        if (more != null) {
            LOG.warn("tcp {}: closing connection {}: {} ({} handshake timeouts in all{})", busName, peer, why, handshakeTimeouts.get(), more);
        }
    }

    void onBestEffortDrop() {
        bestEffortDrops.incrementAndGet();
    }

    void onFrameQueued() {
        framesQueued.incrementAndGet();
    }

    void onFrameWithoutSubscriber() {
        framesWithoutSubscriber.incrementAndGet();
    }

    TcpTransportConfig config() {
        return config;
    }

    long nodeId() {
        return nodeId;
    }

    String busName() {
        return busName;
    }

    boolean isClosed() {
        return closed;
    }

    // ------------------------------------------------------------------ observability

    /** The counters below, by their method names, for {@link io.rdmabus.BusStats#transportCounters()}. */
    @Override
    public Map<String, Long> counters() {
        return Map.of("protocolErrors", protocolErrors(), "handshakeRejections", handshakeRejections(), "refusedPeers", refusedPeers(),
            "handshakeTimeouts", handshakeTimeouts(), "bestEffortDrops", bestEffortDrops(), "framesQueued", framesQueued(),
            "framesWithoutSubscriber", framesWithoutSubscriber(), "connectAttempts", connectAttempts(), "connectionsClosed",
            connectionsClosed());
    }

    /**
     * Each handshaken connection with its {@link TcpConnectionCounter counters}; its id is unique for this transport's life.
     */
    @Override
    public List<io.rdmabus.ConnectionStats> connections() {
        final List<PeerConnection> live;
        synchronized (lock) {
            live = new ArrayList<>(connections);
        }
        final List<io.rdmabus.ConnectionStats> out = new ArrayList<>(live.size());
        live.forEach(c -> out.add(c.stats()));
        return out;
    }

    /**
     * @return connections refused before any frame because the peer did not authenticate: it has no bus secret while this
     *         node has one (or the reverse), a wrong one, sent something else than its AUTH proof, or failed TLS (no TLS,
     *         a certificate this node does not trust), or it speaks TLS to a node without
     */
    public long refusedPeers() {
        return refusedPeers.get();
    }

    /** @return the last refused peer and why (what the rate-limited log may not have said), or null if none was refused */
    public String lastRefusal() {
        return lastRefusal;
    }

    /** @return connections closed because their handshake (TLS, hello, AUTH) did not complete within {@code tcp.handshake.timeout.ms} */
    public long handshakeTimeouts() {
        return handshakeTimeouts.get();
    }

    /** @return connections closed because the peer broke the protocol (garbage, bad length prefix, a message out of order) */
    public long protocolErrors() {
        return protocolErrors.get();
    }

    /** @return connections refused at the hello: another protocol version or another max frame size */
    public long handshakeRejections() {
        return handshakeRejections.get();
    }

    /**
     * @return best-effort frames dropped by this node: not queued to a peer whose outbound buffer was full (or whose
     *     credit for a topic it subscribed reliable was used up), or not kept for a subscription that refused them once its
     *     topic's queue held a window's worth
     */
    public long bestEffortDrops() {
        return bestEffortDrops.get();
    }

    /** @return times a reliable frame waited in its topic's queue because a subscription's sink pushed back (the connection reads on) */
    public long framesQueued() {
        return framesQueued.get();
    }

    /** @return data frames that arrived for a topic this node no longer subscribes */
    public long framesWithoutSubscriber() {
        return framesWithoutSubscriber.get();
    }

    /** @return connection attempts to seeds, first ones and retries */
    public long connectAttempts() {
        return connectAttempts.get();
    }

    /**
     * @return connections (accepted or dialled, handshaken or not) whose channel went inactive and which this transport
     *         has forgotten: no longer a peer, nothing queued to them
     */
    public long connectionsClosed() {
        return connectionsClosed.get();
    }

    /** @return nodes connected (hello exchanged) right now */
    public int connectedPeers() {
        synchronized (lock) {
            return connections.size();
        }
    }

    /** @return one line per handshaken connection with its state, for diagnostic messages */
    String describeConnections() {
        synchronized (lock) {
            final StringBuilder out = new StringBuilder();
            connections.forEach(c -> out.append("\n  ").append(c.describeState()));
            return out.toString();
        }
    }

    // ------------------------------------------------------------------ close

    @Override
    public void close() {
        final List<PeerConnection> open;
        final List<TcpPublication> pubs;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            open = new ArrayList<>(connections);
            pubs = new ArrayList<>(publications);
            publications.clear();
        }
        if (!started) {
            return;
        }
        for (final TcpPublication publication : pubs) {
            publication.closeNow();
        }
        // Flush what is queued, then close; bounded by the linger time.
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.lingerMs());
        for (final PeerConnection connection : open) {
            connection.closeGracefully();
        }
        for (final PeerConnection connection : open) {
            final Channel channel = connection.channel();
            final long leftMs = Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadlineNs - System.nanoTime()));
            if (channel != null && !channel.closeFuture().awaitUninterruptibly(leftMs)) {
                channel.close();
            }
        }
        for (final PeerConnection connection : allChannels) {
            connection.close(); // connections still in their hello, or accepted after the snapshot above
        }
        final DisposableServer s = server;
        if (s != null) {
            try {
                s.disposeNow(Duration.ofSeconds(5));
            } catch (final RuntimeException ex) {
                LOG.warn("tcp {}: closing the listening socket: {}", busName, ex.toString());
            }
        }
        disposeLoops();
        LOG.info("tcp {}: closed ({} protocol errors, {} handshake rejections, {} refused peers, {} handshake timeouts, {} best-effort drops)",
            busName, protocolErrors.get(), handshakeRejections.get(), refusedPeers.get(), handshakeTimeouts.get(), bestEffortDrops.get());
    }

    private void disposeLoops() {
        final TcpLoopResources l = loops;
        if (l != null) {
            try {
                l.disposeLater(Duration.ZERO, Duration.ofSeconds(2)).block(Duration.ofSeconds(10));
            } catch (final RuntimeException ex) {
                LOG.warn("tcp {}: event loops did not stop in time: {}", busName, ex.toString());
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /** The remote subscribers of one topic, shared by every local publication of it. */
    static final class TopicOut {
        private static final RemoteSubscriber[] NONE = new RemoteSubscriber[0];
        /** Copy-on-write; replaced under the transport's lock. */
        volatile RemoteSubscriber[] subscribers = NONE;

        void add(final RemoteSubscriber subscriber) {
            for (final RemoteSubscriber s : subscribers) {
                if (s == subscriber) {
                    return;
                }
            }
            final RemoteSubscriber[] grown = Arrays.copyOf(subscribers, subscribers.length + 1);
            grown[subscribers.length] = subscriber;
            subscribers = grown;
        }

        void remove(final RemoteSubscriber subscriber) {
            subscribers = Arrays.stream(subscribers).filter(s -> s != subscriber).toArray(RemoteSubscriber[]::new);
        }
    }

    /** A seed endpoint this node keeps a connection to, dialling again with capped exponential backoff. */
    final class Seed {
        private final InetSocketAddress address;
        private long backoffMs = config.reconnectMinMs();

        Seed(final InetSocketAddress address) {
            this.address = address;
        }

        void connect() {
            if (closed) {
                return;
            }
            connectAttempts.incrementAndGet();
            try {
                client.remoteAddress(() -> new InetSocketAddress(address.getHostString(), address.getPort()))
                    .doOnChannelInit((observer, channel, remote) -> {
                        channel.pipeline().addFirst(HANDLER, new PeerConnection(TcpTransport.this, this));
                        if (config.tls().enabled()) {
                            channel.pipeline().addFirst(TLS_HANDLER, config.tls().newClientHandler(channel.alloc(), address.getHostString(),
                                address.getPort()));
                        }
                    })
                    .connect()
                    .subscribe(connection -> { }, error -> {
                        LOG.debug("tcp {}: cannot connect to seed {}: {}", busName, address, error.toString());
                        scheduleRetry(false);
                    });
            } catch (final RuntimeException ex) {
                LOG.debug("tcp {}: cannot connect to seed {}: {}", busName, address, ex.toString());
                scheduleRetry(false);
            }
        }

        synchronized void onConnected() {
            backoffMs = config.reconnectMinMs();
        }

        void scheduleRetry(final boolean atMaxDelay) {
            if (closed) {
                return;
            }
            final long delayMs;
            synchronized (this) {
                delayMs = atMaxDelay ? config.reconnectMaxMs() : backoffMs;
                backoffMs = Math.min(config.reconnectMaxMs(), backoffMs * 2);
            }
            try {
                loops.group().schedule(this::connect, delayMs, TimeUnit.MILLISECONDS);
            } catch (final RejectedExecutionException ex) {
                LOG.debug("tcp {}: not dialling {} again, the transport is closing", busName, address);
            }
        }
    }
}
