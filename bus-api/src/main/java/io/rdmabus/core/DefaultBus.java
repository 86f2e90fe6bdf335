package io.rdmabus.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.rdmabus.Bus;
import io.rdmabus.BusConfigurationException;
import io.rdmabus.BusException;
import io.rdmabus.BusPublication;
import io.rdmabus.BusStats;
import io.rdmabus.MessageHandler;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.ThreadingMode;
import io.rdmabus.Topic;
import io.rdmabus.TransportException;
import io.rdmabus.counters.BusCounters;
import io.rdmabus.counters.CountersFile;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.AgentHost;
import io.rdmabus.spi.AgentThreads;
import io.rdmabus.spi.DedicatedAgentHost;
import io.rdmabus.spi.Discovery;
import io.rdmabus.spi.HostedAgent;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportCapabilities;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportPublication;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** The bus over one transport: publications encode in place, subscriptions go through a ring into a {@code Flux}. */
public final class DefaultBus implements Bus {
    private static final Logger LOG = LoggerFactory.getLogger(DefaultBus.class);
    private static final long CLOSE_WAIT_NS = 10_000_000_000L;

    private final String name;
    private final Transport transport;
    private final Supplier<IdleStrategy> idleStrategies;
    private final ThreadingMode threadingMode;
    private final DeliveryAgent deliveryAgent;
    /** SHARED and INVOKER: runs the delivery agent and the transport's hosted agents; DEDICATED: null. */
    private final SharedAgent sharedAgent;
    /** SHARED: the shared agent's thread; otherwise null. */
    private final AgentRunner sharedRunner;
    /**
     * The idle strategy of the thread that runs the delivery agent (SHARED: the shared thread; DEDICATED: its own), which a
     * message landing in an empty ring from another thread wakes; INVOKER: null (the application's loop idles as it likes).
     */
    private final WakeableIdleStrategy deliveryIdle;
    private final HostedAgent delivery;
    /** Emits for drop-oldest/conflating subscriptions, so their slow subscribers never stop the ring being drained. */
    private final Scheduler emitScheduler;
    private final List<SubscriptionChannel<?>> channels = new CopyOnWriteArrayList<>();
    private final List<InPlaceSubscription> inPlace = new CopyOnWriteArrayList<>();
    private final List<DefaultPublication<?>> publications = new CopyOnWriteArrayList<>();
    private final Map<Integer, String> topicNamesById = new ConcurrentHashMap<>();
    /**
     * Messages of publications closed so far; the live ones count their own (no bus-wide atomic add per message). Folded
     * in under this lock as a publication closes, and summed under it, so the total never goes back.
     */
    private final Object publishedLock = new Object();
    private long publishedByClosed;
    private final AtomicLong droppedNotConnected = new AtomicLong();
    private final AtomicLong agentErrors = new AtomicLong();
    /** The counters file other processes read ({@code rdma-bus stats}); null when it is off. */
    private final BusCounters counters;
    /** Same-bus loopback done by the bus, for a transport that does not loop back by itself; else null. */
    private final LocalRoutes localRoutes;
    /** Late-join servers, one per topic with a last-value cache that this bus publishes. */
    private final Map<Integer, LastValueServer> lastValueServers = new ConcurrentHashMap<>();
    private volatile boolean closed;


    /**
     * @param name           bus name
     * @param transport      an unstarted transport this bus owns
     * @param idleStrategies idle strategy for every agent thread
     * @param discovery      handed to the transport
     * @param threadingMode  which threads run the delivery agent and the transport's hosted agents
     * @param countersDir    where the counters file goes ({@link BusCounters#directory}): null for the default, "off" for none
     */
    public DefaultBus(final String name, final Transport transport, final Supplier<IdleStrategy> idleStrategies, final Discovery discovery,
                      final ThreadingMode threadingMode, final String countersDir) {
        this.name = name;
        this.transport = transport;
        this.idleStrategies = idleStrategies;
        this.threadingMode = threadingMode;
        final java.nio.file.Path dir = BusCounters.directory(countersDir);
        this.counters = dir == null ? null : BusCounters.create(dir, name, transport.name());
        final AgentHost host;
        if (threadingMode == ThreadingMode.DEDICATED) {
            sharedAgent = null;
            deliveryIdle = new WakeableIdleStrategy(idleStrategies.get());
            sharedRunner = null;
            host = new DedicatedAgentHost(idleStrategies, this::onAgentError);
        } else {
            final boolean invoker = threadingMode == ThreadingMode.INVOKER;
            deliveryIdle = invoker ? null : new WakeableIdleStrategy(idleStrategies.get());
            sharedAgent = new SharedAgent("rdma-bus-shared-" + name, invoker, this::onAgentError, deliveryIdle);
            sharedRunner = invoker ? null : new AgentRunner(deliveryIdle, this::onAgentError, null, sharedAgent);
            if (sharedRunner != null) {
                AgentThreads.start(sharedRunner);
            }
            host = sharedAgent;
        }
        this.deliveryAgent = new DeliveryAgent(name, deliveryIdle == null ? () -> { } : deliveryIdle::wake);
        if (deliveryIdle != null) {
            deliveryIdle.parkWhile(deliveryAgent::waitsForDemand); // a subscriber's request wakes nobody
        }
        try {
            transport.start(new TransportContext(name, idleStrategies, this::onAgentError, discovery, host));
        } catch (final RuntimeException ex) {
            stopSharedAgent();
            if (counters != null) {
                counters.close();
            }
            throw ex;
        }
        this.localRoutes = transport.capabilities().loopback() ? null : new LocalRoutes();
        if (counters != null) {
            counters.addScope(CountersFile.KIND_BUS, "bus " + name, CountersFile.BUS_COUNTERS, v -> {
                v[0] = published();
                v[1] = droppedNotConnected.get();
                v[2] = agentErrors.get();
                v[3] = channels.size() + inPlace.size();
                v[4] = publications.size();
            });
            counters.transportCounters(transport::counters);
            counters.transportConnections(transport::connections);
        }
        // DEDICATED: the delivery agent's own thread, under the idle strategy that ring messages wake
        this.delivery = (threadingMode == ThreadingMode.DEDICATED ? new DedicatedAgentHost(() -> deliveryIdle, this::onAgentError) : host)
            .host(deliveryAgent);
        this.emitScheduler = Schedulers.newBoundedElastic(4, 100_000, "rdma-bus-emit-" + name, 10, true);
    }

    /**
     * A {@link TransportException} is a fault the transport has described and handled (a peer's malformed message, a
     * broken connection): a WARN line with its message. Anything else is unexpected (a bug): ERROR with the stack trace.
     */
    private void onAgentError(final Throwable error) {
        agentErrors.incrementAndGet();
        final BusCounters file = counters;
        if (file != null) {
            file.recordError(error);
        }
        if (error instanceof TransportException) {
            LOG.warn("bus {}: {}", name, error.getMessage());
        } else {
            LOG.error("bus {}: agent error", name, error);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new BusException("Bus '" + name + "' is closed");
        }
    }

    private void register(final Topic<?> topic) {
        final String previous = topicNamesById.putIfAbsent(topic.topicId(), topic.name());
        if (previous != null && !previous.equals(topic.name())) {
            throw new BusConfigurationException("Topic names '" + previous + "' and '" + topic.name() + "' hash to the same topic id "
                + topic.topicId() + ": rename one of them");
        }
    }

    @Override
    public <T> Flux<Received<T>> subscribeReceived(final Topic<T> topic, final SubscribeOptions<T> options) {
        if (topic == null || options == null) {
            throw new BusConfigurationException("subscribe needs a topic and options (SubscribeOptions.defaults())");
        }
        return topic.lastValueKey() != null ? LateJoin.flux(this, topic, options) : subscribeDirect(topic, options);
    }

    /** A subscription of the topic itself (no late join): what {@link #subscribeReceived} does for a topic without a cache. */
    <T> Flux<Received<T>> subscribeDirect(final Topic<T> topic, final SubscribeOptions<T> options) {
        // A back-pressure subscription is signalled by one thread at a time (the one delivering: its agent's), so it needs
        // none of Flux.create's serialisation (two atomic operations per value); a policy subscription emits on its worker
        // while the agent may complete it, so it keeps it.
        final Consumer<FluxSink<Received<T>>> attach = sink -> {
            try {
                checkOpen();
                register(topic);
            } catch (final BusException ex) {
                sink.error(ex);
                return;
            }
            final TransportCapabilities capabilities = transport.capabilities();
            final int maxFrame = capabilities.maxFrameLength(topic.delivery());
            // direct emission (SubscriptionChannel.claimForReceive): INVOKER only inside the application's duty cycle;
            // SHARED inside the shared thread's cycle and, unless the transport receives only there, on any receiving
            // thread that refuses blocking (TCP's event loops); DEDICATED never (onNext stays on the delivery thread)
            final boolean fromReceivingThreads = threadingMode == ThreadingMode.SHARED
                && !capabilities.receivesOnAgentHost();
            final SubscriptionChannel<T> channel = new SubscriptionChannel<>(topic, options, maxFrame,
                SubscriptionChannel.emitsOnWorker(topic, options) ? emitScheduler.createWorker() : null,
                threadingMode == ThreadingMode.DEDICATED ? null : delivery, deliveryIdle, fromReceivingThreads);
            channel.sink = sink;
            channel.subscriberErrors = this::onAgentError;
            if (counters != null) {
                channel.errorLog = counters::recordError;
            }
            try {
                channel.transportSubscription = transport.addSubscription(topic.descriptor(), channel);
            } catch (final RuntimeException ex) {
                sink.error(ex);
                return;
            }
            channels.add(channel);
            deliveryAgent.add(channel);
            if (localRoutes != null) {
                localRoutes.add(topic.topicId(), channel);
            }
            final BusCounters.Scope scope = counters == null ? null
                : counters.addScope(CountersFile.KIND_SUBSCRIPTION, "subscription " + topic.name(), CountersFile.SUBSCRIPTION_COUNTERS,
                    channel::sampleCounters);
            final Runnable dispose = () -> {
                if (scope != null) {
                    scope.close();
                }
                channel.releaseSubscriber();
                channel.close();
                channels.remove(channel);
                if (localRoutes != null) {
                    localRoutes.remove(topic.topicId(), channel);
                }
                if (!closed) {
                    deliveryAgent.remove(channel);
                }
            };
            channel.cancelAction = dispose; // a subscriber whose onNext throws counts as cancelled (rule 2.13)
            sink.onDispose(dispose::run);
        };
        return SubscriptionChannel.emitsOnWorker(topic, options)
            ? Flux.create(attach, FluxSink.OverflowStrategy.ERROR)
            : Flux.push(attach, FluxSink.OverflowStrategy.ERROR);
    }

    @Override
    public Disposable subscribeInPlace(final Topic<?> topic, final MessageHandler handler) {
        if (topic == null || handler == null) {
            throw new BusConfigurationException("subscribeInPlace needs a topic and a handler");
        }
        checkOpen();
        register(topic);
        final int maxFrame = transport.capabilities().maxFrameLength(topic.delivery());
        final InPlaceSubscription subscription = new InPlaceSubscription(topic, maxFrame, handler, this::onAgentError, this::onInPlaceDisposed);
        inPlace.add(subscription);
        try {
            subscription.transportSubscription = transport.addSubscription(topic.descriptor(), subscription);
        } catch (final RuntimeException ex) {
            inPlace.remove(subscription);
            throw ex;
        }
        if (counters != null) {
            subscription.countersScope = counters.addScope(CountersFile.KIND_SUBSCRIPTION, "subscription " + topic.name() + " (in place)",
                CountersFile.SUBSCRIPTION_COUNTERS, subscription::sampleCounters);
            if (subscription.isDisposed()) {
                subscription.countersScope.close(); // disposed by a transport error while the scope was added
            }
        }
        return subscription;
    }

    private void onInPlaceDisposed(final InPlaceSubscription subscription) {
        inPlace.remove(subscription);
        final BusCounters.Scope scope = subscription.countersScope;
        if (scope != null) {
            scope.close();
        }
    }

    @Override
    public <T> Mono<Void> publish(final Topic<T> topic, final Publisher<? extends T> values) {
        return Mono.create(done -> {
            final DefaultPublication<T> publication;
            try {
                publication = newPublication(topic);
            } catch (final RuntimeException ex) {
                done.error(ex);
                return;
            }
            values.subscribe(new PublishSubscriber<T>(this, publication, done, idleStrategies.get()));
        });
    }

    @Override
    public <T> BusPublication<T> publication(final Topic<T> topic) {
        return newPublication(topic);
    }

    private <T> DefaultPublication<T> newPublication(final Topic<T> topic) {
        if (topic == null) {
            throw new BusConfigurationException("publication needs a topic");
        }
        checkOpen();
        register(topic);
        final int maxFrame = transport.capabilities().maxFrameLength(topic.delivery());
        if (maxFrame <= FrameHeader.LENGTH) {
            throw new BusConfigurationException("Transport " + transport.name() + " carries frames of at most " + maxFrame
                + " bytes for " + topic.delivery() + ", no room after the " + FrameHeader.LENGTH + "-byte header");
        }
        int sessionId;
        do {
            sessionId = ThreadLocalRandom.current().nextInt();
        } while (sessionId == 0);
        final TransportPublication tp = transport.addPublication(topic.descriptor(), sessionId);
        final DefaultPublication<T> publication = new DefaultPublication<>(this, topic, tp, sessionId,
            localRoutes == null ? null : new LocalDelivery(localRoutes.route(topic.topicId())));
        if (counters != null) {
            publication.countersScope = counters.addScope(CountersFile.KIND_PUBLICATION, "publication " + topic.name() + " session "
                + Integer.toHexString(sessionId), CountersFile.PUBLICATION_COUNTERS, publication::sampleCounters);
        }
        publications.add(publication);
        if (publication.lastValues() != null) {
            lastValueServers.computeIfAbsent(topic.topicId(), id -> new LastValueServer(this, topic)).add(publication.lastValues());
        }
        return publication;
    }

    /** @return messages published by this bus's publications, open and closed */
    private long published() {
        synchronized (publishedLock) {
            long sum = publishedByClosed;
            for (final DefaultPublication<?> publication : publications) {
                sum += publication.messageCount();
            }
            return sum;
        }
    }

    void onDroppedNotConnected() {
        droppedNotConnected.incrementAndGet();
    }

    void onPublicationClosed(final DefaultPublication<?> publication) {
        synchronized (publishedLock) {
            if (publications.remove(publication)) {
                publishedByClosed += publication.messageCount();
            }
        }
        if (publication.lastValues() != null) {
            final LastValueServer server = lastValueServers.get(publication.topic().topicId());
            if (server != null) {
                server.remove(publication.lastValues());
            }
        }
        if (publication.countersScope != null) {
            publication.countersScope.close();
        }
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public int doWork() {
        if (sharedAgent == null || sharedRunner != null) {
            throw new BusException("Bus '" + name + "' runs its agents on its own threads (ThreadingMode." + threadingMode
                + "): doWork() is for a bus built with threadingMode(ThreadingMode.INVOKER)");
        }
        return sharedAgent.doWork();
    }

    /** @return the threading mode */
    public ThreadingMode threadingMode() {
        return threadingMode;
    }

    private void stopSharedAgent() {
        if (sharedRunner != null) {
            sharedRunner.close(); // its last act closes every agent still hosted
        } else if (sharedAgent != null) {
            sharedAgent.onClose();
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String transportName() {
        return transport.name();
    }

    @Override
    public BusStats stats() {
        final List<SubscriptionStats> subscriptions = new ArrayList<>();
        channels.forEach(channel -> subscriptions.add(channel.stats()));
        inPlace.forEach(subscription -> subscriptions.add(subscription.stats()));
        return new BusStats(transport.name(), List.copyOf(subscriptions), published(),
            droppedNotConnected.get(), transport.counters(), transport.connections());
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // offers now return CLOSED; a publication busy in another thread's offer closes itself when that offer returns
        for (final DefaultPublication<?> publication : publications) {
            publication.close();
        }
        final long deadlineNs = System.nanoTime() + CLOSE_WAIT_NS;
        for (final DefaultPublication<?> publication : publications) {
            while (!publication.isClosed() && System.nanoTime() < deadlineNs) {
                Thread.yield();
            }
            if (!publication.isClosed()) {
                LOG.warn("bus {}: publication of '{}' still busy after {} ms; closing the transport anyway", name,
                    publication.topic().name(), CLOSE_WAIT_NS / 1_000_000);
            }
        }
        lastValueServers.values().forEach(LastValueServer::close);
        for (final SubscriptionChannel<?> channel : channels) {
            channel.close();
        }
        inPlace.forEach(InPlaceSubscription::dispose);
        delivery.close(); // runs DeliveryAgent.onClose on the thread that ran it: completes every subscriber
        emitScheduler.dispose();
        transport.close(); // INVOKER: waits for its hosted agents by running cycles on this thread
        stopSharedAgent();
        channels.clear();
        if (counters != null) {
            counters.close();
        }
        LOG.info("bus {} closed ({} agent errors)", name, agentErrors.get());
    }
}
