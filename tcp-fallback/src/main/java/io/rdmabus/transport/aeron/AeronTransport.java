package io.rdmabus.transport.aeron;

import java.io.File;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.aeron.Aeron;
import io.aeron.AeronCounters;
import io.aeron.CommonContext;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.exceptions.AeronException;
import io.rdmabus.Delivery;
import io.rdmabus.TransportException;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.HostedAgent;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportCapabilities;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportSubscription;

import org.agrona.CloseHelper;
import org.agrona.IoUtil;
import org.agrona.concurrent.status.CountersReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bus over Aeron: an embedded media driver per bus (or an external one, {@code aeron.dir}), one Aeron client,
 * one exclusive publication per bus publication, and one receive agent polling every subscription.
 *
 * <p>Channels (see {@code docs/aeron-compat.md}); the stream id is {@code stream.id.base + topicId}:
 * <ul>
 *   <li>UDP unicast: multi-destination-cast with dynamic control. Publications bind this node's control endpoint
 *   {@code aeron:udp?control=<endpoint>|control-mode=dynamic}; a subscription joins its own endpoint and every
 *   {@code aeron-udp} seed from discovery ({@code aeron:udp?endpoint=<interface>:0|control=<seed>|control-mode=dynamic}),
 *   so one publisher reaches N subscribers on one host (each with an ephemeral receive port).</li>
 *   <li>UDP multicast: {@code aeron:udp?endpoint=<group>|interface=<interface>|ttl=0}.</li>
 *   <li>IPC: {@code aeron:ipc}; publishers and subscribers must share one media driver.</li>
 * </ul>
 * Per delivery: RELIABLE publications use {@code fc=min} (the slowest receiver governs) and reliable, tethered
 * subscriptions; BEST_EFFORT subscriptions are {@code reliable=false} (UDP: gaps are not NAKed but skipped) or
 * {@code tether=false} (IPC: a lagging subscriber is left behind rather than holding the publisher).
 */
public final class AeronTransport implements Transport {
    private static final Logger LOG = LoggerFactory.getLogger(AeronTransport.class);
    private static final long COMMAND_TIMEOUT_MS = 15_000;
    private static final long CLOSE_DRAIN_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(2);
    private static final long AERON_CLIENT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);
    /** Between looks for the driver's answers to asynchronous requests: as the Aeron client's own wait for an answer. */
    private static final long AWAIT_DRIVER_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private final AeronTransportConfig config;
    private final String name;
    private final List<AeronPublication> publications = new CopyOnWriteArrayList<>();
    private final List<AeronSubscription> subscriptions = new CopyOnWriteArrayList<>();
    /** UDP publications closed while the embedded driver may still be sending them: {registrationId, final position}. */
    private final List<long[]> lingering = new CopyOnWriteArrayList<>();
    private TransportContext context;
    private MediaDriver driver;
    private String aeronDir;
    private Aeron aeron;
    private ReceiveAgent receiveAgent;
    /** Where the bus runs the receive agent (its threading mode); null before start. */
    private HostedAgent receiveHost;
    /**
     * Runs the Aeron client's control operations (add a publication or subscription: a round trip to the media driver).
     * A thread of its own that nobody interrupts: an interrupt inside the Aeron client's wait for the driver closes the
     * client for good, and in INVOKER mode the receive agent's cycles run on application threads that may be
     * interrupted (Reactor cancels tasks with one). It also keeps the driver's round trip off the receive duty cycle.
     */
    private java.util.concurrent.ExecutorService control;
    private List<String> controlEndpoints = List.of();
    private volatile boolean started;
    private volatile boolean closed;
    /** The {@link AeronCounter.Source#TRANSPORT} counters (each descriptor names its writer thread). */
    private final java.util.concurrent.atomic.AtomicLongArray counters = AeronCounter.newValues();
    /** What closed publications counted (added atomically when one closes). */
    private final java.util.concurrent.atomic.AtomicLongArray closedPublications = AeronCounter.newValues();
    /** Per {@link AeronCounter}: the media driver's counter id of its system counter, -1 if none; set at start. */
    private final int[] driverCounterIds = new int[AeronCounter.values().length];
    /** The driver's counters as they were when this transport closed its client (guarded by this). */
    private final long[] driverFinal = new long[AeronCounter.values().length];
    /** Set (under this object's lock) just before the client is closed: the driver's counters are then {@link #driverFinal}. */
    private boolean clientClosed;
    private final io.aeron.AvailableImageHandler onImageAvailable = image -> AeronCounter.IMAGES_AVAILABLE.add(counters, 1);
    private final io.aeron.UnavailableImageHandler onImageUnavailable = image -> AeronCounter.IMAGES_UNAVAILABLE.add(counters, 1);

    /** @param config validated settings */
    public AeronTransport(final AeronTransportConfig config) {
        this.config = config;
        this.name = config.medium().factoryName();
        java.util.Arrays.fill(driverCounterIds, -1);
    }

    @Override
    public String name() {
        return name;
    }

    /** @return the settings */
    public AeronTransportConfig config() {
        return config;
    }

    /**
     * Both deliveries carry frames up to the Aeron max payload of one unfragmented message: {@code mtu} minus Aeron's
     * 32-byte data header. The bus fragments bigger reliable messages.
     */
    @Override
    public TransportCapabilities capabilities() {
        final int maxFrame = config.mtuBytes() - io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;
        final boolean multicast = config.medium() == AeronMedium.UDP && config.multicastGroup() != null;
        // loopback: one media driver serves the bus's publications and subscriptions, so a subscription gets its own bus's
        // frames from the driver (IPC: the shared log; UDP: the publication sends to the subscription's endpoint too).
        // receivesOnAgentHost: the sinks are called only by the receive agent, which the bus hosts (start)
        return new TransportCapabilities(maxFrame, maxFrame, multicast, config.medium() == AeronMedium.UDP, true, true);
    }

    /** @return the media driver directory in use (embedded or external); valid after {@link #start} */
    public String aeronDirectory() {
        return aeronDir;
    }

    @Override
    public synchronized void start(final TransportContext ctx) {
        if (started) {
            throw new TransportException(name + " transport already started");
        }
        if (closed) {
            throw new TransportException(name + " transport is closed");
        }
        this.context = ctx;
        final String bus = ctx.busName();
        try {
            if (config.aeronDir() == null) {
                aeronDir = CommonContext.getAeronDirectoryName() + "-rdma-bus-" + sanitize(bus) + "-" + UUID.randomUUID();
                driver = MediaDriver.launchEmbedded(driverContext(ctx, aeronDir));
            } else {
                aeronDir = config.aeronDir();
                if (config.dedicatedThreads()) {
                    LOG.warn("bus {}: {} ignores driver.threading=dedicated: aeron.dir selects an external driver, configured on its own", bus, name);
                }
                if (!new File(aeronDir, "cnc.dat").exists()) {
                    throw new TransportException(name + ": no media driver at aeron.dir '" + aeronDir
                        + "' (no cnc.dat): start one there, or remove aeron.dir to embed a driver per bus");
                }
            }
            aeron = Aeron.connect(new Aeron.Context()
                .aeronDirectoryName(aeronDir)
                .threadFactory(namedThreads("client", bus))
                .errorHandler(ctx.errorHandler()::accept)
                .driverTimeoutMs(TimeUnit.NANOSECONDS.toMillis(AERON_CLIENT_TIMEOUT_NS)));
        } catch (final RuntimeException ex) {
            closeResources();
            if (ex instanceof TransportException te) {
                throw te;
            }
            throw new TransportException(name + ": cannot start the Aeron media driver/client in '" + aeronDir + "': " + ex.getMessage(), ex);
        }
        findDriverCounters();
        final Set<String> endpoints = new LinkedHashSet<>();
        endpoints.add(config.endpoint());
        endpoints.addAll(ctx.discovery().endpoints(name));
        controlEndpoints = List.copyOf(endpoints);
        receiveAgent = new ReceiveAgent(threadName("receiver", bus));
        control = java.util.concurrent.Executors.newSingleThreadExecutor(namedThreads("control", bus));
        receiveHost = ctx.agentHost().host(receiveAgent);
        receiveAgent.hostedAs(receiveHost);
        started = true;
        LOG.info("bus {}: {} started (driver dir {}, {}, channel {})", bus, name, aeronDir,
            driver == null ? "external driver" : (config.dedicatedThreads() ? "dedicated" : "shared") + " driver threading",
            describeChannels());
    }

    private MediaDriver.Context driverContext(final TransportContext ctx, final String dir) {
        final String bus = ctx.busName();
        final MediaDriver.Context dc = new MediaDriver.Context()
            .aeronDirectoryName(dir)
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .warnIfDirectoryExists(false)
            .asyncExecutorEnabled(false) // name resolution on the conductor: one thread fewer on a 2-core box
            .termBufferSparseFile(true)
            .publicationTermBufferLength(config.termLengthBytes())
            .ipcTermBufferLength(config.termLengthBytes())
            .mtuLength(config.mtuBytes())
            .ipcMtuLength(config.mtuBytes())
            .flowControlReceiverTimeoutNs(TimeUnit.SECONDS.toNanos(2))
            .errorHandler(ctx.errorHandler()::accept);
        if (config.dedicatedThreads()) {
            dc.threadingMode(ThreadingMode.DEDICATED)
                .conductorIdleStrategy(ctx.idleStrategy().get())
                .senderIdleStrategy(ctx.idleStrategy().get())
                .receiverIdleStrategy(ctx.idleStrategy().get())
                .conductorThreadFactory(namedThreads("driver-conductor", bus))
                .senderThreadFactory(namedThreads("driver-sender", bus))
                .receiverThreadFactory(namedThreads("driver-receiver", bus));
        } else {
            dc.threadingMode(ThreadingMode.SHARED)
                .sharedIdleStrategy(ctx.idleStrategy().get())
                .sharedThreadFactory(namedThreads("driver", bus));
        }
        return dc;
    }

    private String threadName(final String role, final String bus) {
        return "rdma-bus-" + name + "-" + role + "-" + bus;
    }

    private ThreadFactory namedThreads(final String role, final String bus) {
        final String threadName = threadName(role, bus);
        final AtomicInteger count = new AtomicInteger();
        return runnable -> {
            final int n = count.getAndIncrement();
            final String threadNameN = n == 0 ? threadName : threadName + "-" + n;
            // AgentRunner renames the thread after the factory made it: take the name back when the thread starts
            final Thread t = new Thread(() -> {
                Thread.currentThread().setName(threadNameN);
                runnable.run();
            }, threadNameN);
            t.setDaemon(true);
            return t;
        };
    }

    private static String sanitize(final String bus) {
        return bus.replaceAll("[^A-Za-z0-9._-]", "_");
    }

    private void checkStarted() {
        if (closed) {
            throw new TransportException(name + " transport is closed");
        }
        if (!started) {
            throw new TransportException(name + " transport is not started: the bus starts it before use");
        }
    }

    // ---------------------------------------------------------------- channels

    /** @return the channel summary for logs */
    private String describeChannels() {
        if (config.channel() != null) {
            return config.channel();
        }
        if (config.medium() == AeronMedium.IPC) {
            return "aeron:ipc";
        }
        if (config.multicastGroup() != null) {
            return "multicast " + config.multicastGroup() + " on " + config.interfaceAddress();
        }
        return "unicast MDC, control endpoint " + config.endpoint() + ", subscribing to " + controlEndpoints;
    }

    /**
     * @param delivery the topic's delivery
     * @return the publication channel
     */
    String publicationChannel(final Delivery delivery) {
        final StringBuilder uri = new StringBuilder();
        if (config.channel() != null) {
            uri.append(config.channel());
        } else if (config.medium() == AeronMedium.IPC) {
            uri.append("aeron:ipc");
        } else if (config.multicastGroup() != null) {
            uri.append("aeron:udp?endpoint=").append(config.multicastGroup()).append("|interface=").append(config.interfaceAddress())
                .append("|ttl=0");
        } else {
            uri.append("aeron:udp?control=").append(config.endpoint()).append("|control-mode=dynamic");
        }
        appendParam(uri, "term-length", Integer.toString(config.termLengthBytes()));
        appendParam(uri, "mtu", Integer.toString(config.mtuBytes()));
        if (config.medium() == AeronMedium.UDP && delivery == Delivery.RELIABLE) {
            appendParam(uri, "fc", "min"); // the slowest receiver holds the publisher back: nothing lost
        }
        return uri.toString();
    }

    /**
     * @param delivery        the topic's delivery
     * @param controlEndpoint UDP unicast: the publisher control endpoint to join; ignored otherwise
     * @return the subscription channel
     */
    String subscriptionChannel(final Delivery delivery, final String controlEndpoint) {
        final StringBuilder uri = new StringBuilder();
        if (config.channel() != null) {
            uri.append(config.channel());
        } else if (config.medium() == AeronMedium.IPC) {
            uri.append("aeron:ipc");
        } else if (config.multicastGroup() != null) {
            uri.append("aeron:udp?endpoint=").append(config.multicastGroup()).append("|interface=").append(config.interfaceAddress());
        } else {
            uri.append("aeron:udp?endpoint=").append(config.interfaceAddress()).append(":0|control=").append(controlEndpoint)
                .append("|control-mode=dynamic");
        }
        if (delivery == Delivery.BEST_EFFORT) {
            if (config.medium() == AeronMedium.IPC) {
                appendParam(uri, "tether", "false");
            } else {
                appendParam(uri, "reliable", "false");
            }
        }
        return uri.toString();
    }

    private static void appendParam(final StringBuilder uri, final String key, final String value) {
        if (uri.indexOf("?" + key + "=") >= 0 || uri.indexOf("|" + key + "=") >= 0) {
            return; // the user's channel wins
        }
        uri.append(uri.indexOf("?") >= 0 ? '|' : '?').append(key).append('=').append(value);
    }

    /** @return the publisher control endpoints a unicast subscription joins */
    List<String> controlEndpoints() {
        return controlEndpoints;
    }

    // ---------------------------------------------------------------- publications and subscriptions

    @Override
    public TransportPublication addPublication(final TopicDescriptor topic) {
        checkStarted();
        final String channel = publicationChannel(topic.delivery());
        final int streamId = config.streamId(topic.topicId());
        final ExclusivePublication publication;
        try {
            publication = onAgent(() -> aeron.addExclusivePublication(channel, streamId));
        } catch (final AeronException ex) {
            throw new TransportException(name + ": cannot publish topic '" + topic.name() + "' on " + channel + " stream " + streamId
                + ": " + ex.getMessage() + hint(ex), ex);
        }
        if (publication.maxPayloadLength() < FrameHeader.LENGTH + 1) {
            publication.close();
            throw new TransportException(name + ": mtu " + config.mtuBytes() + " leaves no room for a frame: raise 'mtu'");
        }
        final AeronPublication result = new AeronPublication(this, publication);
        publications.add(result);
        return result;
    }

    private String hint(final AeronException ex) {
        final String message = String.valueOf(ex.getMessage());
        if (message.contains("in use") || message.contains("bind")) {
            return " (the control endpoint's port is taken on this host: by another media driver given the same 'endpoint' "
                + "(give each node its own 'endpoint' and list the others as '" + name + "' discovery seeds, or share one driver with "
                + "'aeron.dir'), or by any other socket: a port inside the kernel's ephemeral range (net.ipv4.ip_local_port_range) "
                + "can go to any socket bound to port 0, a subscription's receive port among them)";
        }
        return "";
    }

    @Override
    public TransportSubscription addSubscription(final TopicDescriptor topic, final SubscriptionSink sink) {
        checkStarted();
        if (sink == null) {
            throw new TransportException(name + ": addSubscription needs a sink");
        }
        final int streamId = config.streamId(topic.topicId());
        final List<String> channels = new ArrayList<>();
        if (config.medium() == AeronMedium.UDP && config.multicastGroup() == null && config.channel() == null) {
            for (final String endpoint : controlEndpoints) {
                channels.add(subscriptionChannel(topic.delivery(), endpoint));
            }
        } else {
            channels.add(subscriptionChannel(topic.delivery(), null));
        }
        final List<Subscription> aeronSubscriptions;
        try {
            aeronSubscriptions = onAgent(() -> addAeronSubscriptions(channels, streamId));
        } catch (final AeronException ex) {
            throw new TransportException(name + ": cannot subscribe topic '" + topic.name() + "' on " + channels + " stream " + streamId
                + ": " + ex.getMessage(), ex);
        }
        final AeronSubscription subscription = new AeronSubscription(this, sink, List.copyOf(aeronSubscriptions), counters);
        subscriptions.add(subscription);
        await(receiveAgent.add(subscription), "add subscription for topic '" + topic.name() + "'");
        return subscription;
    }

    /**
     * Adds one Aeron subscription per channel (UDP unicast: one per publisher control endpoint) with every request sent
     * before any answer is awaited, so subscribing waits for one round trip to the driver rather than one per endpoint
     * (docs/aeron-compat.md). On the {@link #control} thread. If one fails,
     * or the driver has not answered them all within {@link #AERON_CLIENT_TIMEOUT_NS}, the ones added are closed, the
     * others removed, and the error thrown.
     */
    private List<Subscription> addAeronSubscriptions(final List<String> channels, final int streamId) {
        final long[] registrations = new long[channels.size()];
        final Subscription[] added = new Subscription[registrations.length];
        int sent = 0;
        try {
            for (; sent < registrations.length; sent++) {
                registrations[sent] = aeron.asyncAddSubscription(channels.get(sent), streamId, onImageAvailable, onImageUnavailable);
            }
            final long deadlineNs = System.nanoTime() + AERON_CLIENT_TIMEOUT_NS;
            int pending = registrations.length;
            while (true) {
                for (int i = 0; i < registrations.length; i++) {
                    if (added[i] == null && (added[i] = aeron.getSubscription(registrations[i])) != null) {
                        pending--;
                    }
                }
                if (pending == 0) {
                    return List.of(added);
                }
                if (System.nanoTime() - deadlineNs > 0) {
                    throw new AeronException("the media driver did not answer " + pending + " of " + registrations.length
                        + " subscription requests within " + TimeUnit.NANOSECONDS.toMillis(AERON_CLIENT_TIMEOUT_NS) + " ms");
                }
                java.util.concurrent.locks.LockSupport.parkNanos(AWAIT_DRIVER_NS);
            }
        } catch (final RuntimeException ex) {
            for (int i = 0; i < sent; i++) {
                if (added[i] != null) {
                    CloseHelper.quietClose(added[i]);
                } else {
                    try {
                        aeron.asyncRemoveSubscription(registrations[i]);
                    } catch (final RuntimeException removeFailed) {
                        ex.addSuppressed(removeFailed);
                    }
                }
            }
            throw ex;
        }
    }

    /**
     * Runs an Aeron control operation on the {@link #control} thread and waits for it without being interruptible (an
     * interrupt is kept and re-asserted afterwards), because an interrupt inside the Aeron client's wait for the driver
     * terminates the client for good.
     */
    private <T> T onAgent(final java.util.function.Supplier<T> operation) {
        final java.util.concurrent.ExecutorService executor = control;
        if (executor == null || executor.isShutdown()) {
            return operation.get();
        }
        final java.util.concurrent.CompletableFuture<T> done = java.util.concurrent.CompletableFuture.supplyAsync(operation, executor);
        boolean interrupted = false;
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(COMMAND_TIMEOUT_MS);
        try {
            while (true) {
                try {
                    return done.get(Math.max(1, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (final InterruptedException ex) {
                    interrupted = true;
                } catch (final java.util.concurrent.ExecutionException ex) {
                    if (ex.getCause() instanceof RuntimeException re) {
                        throw re;
                    }
                    throw new TransportException(name + ": control operation failed: " + ex.getCause(), ex.getCause());
                } catch (final java.util.concurrent.TimeoutException ex) {
                    throw new TransportException(name + ": a control operation did not complete within " + COMMAND_TIMEOUT_MS
                        + " ms (is the media driver alive?)", ex);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits up to {@link #COMMAND_TIMEOUT_MS} for a command of the receive agent, letting it progress (in INVOKER mode this
     * thread may run its duty cycles). Never interruptible: the agent's subscription list must match what the caller sees.
     *
     * @return false if it did not complete in time
     */
    private boolean waitFor(final java.util.concurrent.CompletableFuture<?> done) {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(COMMAND_TIMEOUT_MS);
        while (!done.isDone()) {
            if (receiveHost.isClosed()) {
                return done.isDone();
            }
            if (System.nanoTime() - deadlineNs > 0) {
                return false;
            }
            receiveHost.idleWhileWaiting();
        }
        return true;
    }

    private void await(final java.util.concurrent.CompletableFuture<Void> done, final String what) {
        if (receiveHost == null || receiveHost.isClosed()) {
            return;
        }
        if (!waitFor(done)) {
            throw new TransportException(name + ": receive agent did not " + what + " within " + COMMAND_TIMEOUT_MS + " ms");
        }
    }

    void onPublicationClosed(final AeronPublication publication) {
        publications.remove(publication);
        for (final AeronCounter counter : AeronCounter.values()) {
            if (counter.source() == AeronCounter.Source.PUBLICATIONS) {
                closedPublications.addAndGet(counter.id(), publication.counts.get(counter.id()));
            }
        }
        if (!closed) {
            final ExclusivePublication p = publication.aeronPublication();
            if (driver != null && config.medium() == AeronMedium.UDP && !p.isClosed() && p.isConnected()) {
                if (lingering.size() >= 64) { // forget the ones already sent (or gone from the driver)
                    final CountersReader counters = aeron.countersReader();
                    lingering.removeIf(t -> {
                        final long sent = senderPosition(counters, t[0]);
                        return sent < 0 || sent >= t[1];
                    });
                }
                lingering.add(new long[] {p.registrationId(), p.position()}); // close() waits for these before the driver stops
            }
            CloseHelper.quietClose(p);
        }
    }

    void onSubscriptionClosed(final AeronSubscription subscription) {
        subscriptions.remove(subscription);
        if (closed) {
            return;
        }
        final ReceiveAgent agent = receiveAgent;
        if (agent != null && receiveHost != null && !receiveHost.isClosed()) {
            try {
                await(agent.remove(subscription), "remove a subscription");
            } catch (final TransportException ex) {
                LOG.warn("{}: {}", name, ex.getMessage());
            }
        }
        subscription.aeronSubscriptions().forEach(CloseHelper::quietClose);
    }

    // ---------------------------------------------------------------- counters

    /** Finds the media driver's system counters that {@link AeronCounter} reads (control path, once at start). */
    private void findDriverCounters() {
        final CountersReader reader = aeron.countersReader();
        reader.forEach((counterId, typeId, keyBuffer, label) -> {
            if (typeId != io.aeron.driver.status.SystemCounterDescriptor.SYSTEM_COUNTER_TYPE_ID) {
                return;
            }
            final int systemId = keyBuffer.getInt(0);
            for (final AeronCounter counter : AeronCounter.values()) {
                if (counter.systemCounter() != null && counter.systemCounter().id() == systemId) {
                    driverCounterIds[counter.id()] = counterId;
                }
            }
        });
    }

    /**
     * One entry per {@link AeronCounter}, in its order, by its name; each descriptor says what it counts and which thread
     * writes it. The driver's counters are 0 before start.
     */
    @Override
    public java.util.Map<String, Long> counters() {
        final java.util.Map<String, Long> out = new java.util.LinkedHashMap<>();
        for (final AeronCounter counter : AeronCounter.values()) {
            out.put(counter.counterName(), value(counter));
        }
        return java.util.Collections.unmodifiableMap(out);
    }

    private long value(final AeronCounter counter) {
        return switch (counter.source()) {
            case TRANSPORT -> counters.get(counter.id());
            case PUBLICATIONS -> {
                long sum = closedPublications.get(counter.id());
                for (final AeronPublication publication : publications) {
                    sum += publication.counts.get(counter.id());
                }
                yield sum;
            }
            case GAUGE -> {
                long images = 0;
                for (final AeronSubscription subscription : subscriptions) {
                    for (final Subscription s : subscription.aeronSubscriptions()) {
                        images += s.imageCount();
                    }
                }
                yield images;
            }
            case DRIVER -> driverValue(counter);
        };
    }

    /** Under this object's lock: {@link #close()} unmaps the driver's counters, after keeping their last values. */
    private synchronized long driverValue(final AeronCounter counter) {
        final int id = driverCounterIds[counter.id()];
        if (clientClosed || aeron == null || id < 0) {
            return driverFinal[counter.id()];
        }
        return aeron.countersReader().getCounterValue(id);
    }

    // ---------------------------------------------------------------- close

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (driver != null) {
            awaitSent();
        }
        for (final AeronCounter counter : AeronCounter.values()) {
            if (counter.source() == AeronCounter.Source.DRIVER) {
                driverFinal[counter.id()] = driverValue(counter);
            }
        }
        clientClosed = true;
        closeResources();
        LOG.info("{}: transport closed{}", name, driver == null ? "" : ", driver dir " + aeronDir + " removed");
    }

    /**
     * With an embedded driver, closing the driver would drop frames that are committed but not yet sent: wait, bounded,
     * until each open UDP publication's sender position reaches its publisher position.
     */
    private void awaitSent() {
        if (aeron == null || config.medium() != AeronMedium.UDP) {
            return;
        }
        final List<long[]> targets = new ArrayList<>(lingering);
        for (final AeronPublication publication : publications) {
            final ExclusivePublication p = publication.aeronPublication();
            if (!p.isClosed() && p.isConnected()) {
                targets.add(new long[] {p.registrationId(), p.position()});
            }
        }
        if (targets.isEmpty()) {
            return;
        }
        final CountersReader counters = aeron.countersReader();
        final long deadlineNs = System.nanoTime() + CLOSE_DRAIN_TIMEOUT_NS;
        for (final long[] target : targets) {
            while (System.nanoTime() < deadlineNs) {
                final long sent = senderPosition(counters, target[0]);
                if (sent < 0 || sent >= target[1]) {
                    break; // sent, or the driver already dropped the publication (drained and lingered out)
                }
                sleepMs(1);
            }
        }
        lingering.clear();
    }

    private static long senderPosition(final CountersReader counters, final long registrationId) {
        final long[] found = {-1};
        counters.forEach((counterId, typeId, keyBuffer, label) -> {
            if (typeId == AeronCounters.DRIVER_SENDER_POSITION_TYPE_ID && counters.getCounterRegistrationId(counterId) == registrationId) {
                found[0] = counters.getCounterValue(counterId);
            }
        });
        return found[0];
    }

    private static void sleepMs(final long ms) {
        try {
            Thread.sleep(ms);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private void closeResources() {
        final List<Throwable> errors = new ArrayList<>();
        if (receiveHost != null) {
            receiveHost.close(); // stops polling: no sink is called after this
        }
        if (control != null) {
            control.shutdown(); // runs what was submitted, then its thread ends
            try {
                if (!control.awaitTermination(COMMAND_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                    LOG.warn("{}: a control operation was still running {} ms after close", name, COMMAND_TIMEOUT_MS);
                }
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
        for (final AeronPublication publication : publications) {
            CloseHelper.quietClose(publication.aeronPublication());
        }
        publications.clear();
        for (final AeronSubscription subscription : subscriptions) {
            subscription.aeronSubscriptions().forEach(CloseHelper::quietClose);
        }
        subscriptions.clear();
        try {
            CloseHelper.close(aeron);
        } catch (final RuntimeException ex) {
            errors.add(ex);
        }
        aeron = null;
        try {
            CloseHelper.close(driver);
        } catch (final RuntimeException ex) {
            errors.add(ex);
        }
        if (driver != null && aeronDir != null) {
            IoUtil.delete(new File(aeronDir), true); // belt and braces: dirDeleteOnShutdown already removes it
        }
        if (!errors.isEmpty()) {
            LOG.warn("{}: errors while closing: {}", name, errors);
        }
    }
}
