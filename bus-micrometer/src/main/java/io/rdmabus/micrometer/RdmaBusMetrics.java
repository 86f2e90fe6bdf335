package io.rdmabus.micrometer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

import io.rdmabus.Bus;
import io.rdmabus.BusStats;
import io.rdmabus.SubscriptionStats;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * A bus's counters ({@link Bus#stats()}, the same ones its counters file and {@code rdma-bus stats} show) as Micrometer
 * meters, tagged {@code bus} and {@code transport}, plus {@code topic} per subscription:
 *
 * <pre>{@code
 * new RdmaBusMetrics(bus).bindTo(registry);
 * }</pre>
 *
 * <ul>
 *   <li>{@code rdmabus.published}, {@code rdmabus.dropped.not.connected}: function counters of the bus;</li>
 *   <li>{@code rdmabus.subscription.frames.received}, {@code .messages.delivered}, {@code .malformed}, {@code .gaps},
 *       {@code .dropped}, {@code .duplicates}: function counters per topic (summed over the bus's subscriptions of it);
 *       {@code rdmabus.subscription.ring.capacity} and {@code .ring.free} (the credits): gauges;</li>
 *   <li>{@code rdmabus.transport.<name>}: the transport's own counters ({@code refusedPeers} becomes
 *       {@code rdmabus.transport.refused.peers}); {@code discoveredPeers} is a gauge.</li>
 * </ul>
 * Subscriptions come and go: the binding looks for new topics and removes the meters of gone ones every
 * {@code refreshSeconds} (default 10, on a daemon thread) until {@link #close()}. Meters read the live stats when the
 * registry asks; a closed bus reads as its last values.
 */
public final class RdmaBusMetrics implements MeterBinder, AutoCloseable {
    private static final Set<String> TRANSPORT_GAUGES = Set.of("discoveredPeers");
    private static final Map<String, ToLongFunction<SubscriptionStats>> SUBSCRIPTION_COUNTERS = Map.of(
        "frames.received", SubscriptionStats::framesReceived,
        "messages.delivered", SubscriptionStats::messagesDelivered,
        "malformed", SubscriptionStats::malformedFrames,
        "gaps", SubscriptionStats::gapMessages,
        "dropped", SubscriptionStats::droppedBySubscriber,
        "duplicates", SubscriptionStats::duplicates);
    private static final Map<String, ToLongFunction<SubscriptionStats>> SUBSCRIPTION_GAUGES = Map.of(
        "ring.capacity", SubscriptionStats::ringCapacity,
        "ring.free", SubscriptionStats::ringFree);

    private final Bus bus;
    private final Tags tags;
    private final long refreshSeconds;
    private final Map<String, List<Meter>> topicMeters = new HashMap<>();
    private final List<String> transportNames = new ArrayList<>();
    private MeterRegistry registry;
    private ScheduledExecutorService refresher;

    /** @param bus the bus to expose */
    public RdmaBusMetrics(final Bus bus) {
        this(bus, Tags.empty(), 10);
    }

    /**
     * @param bus            the bus to expose
     * @param extraTags      added to every meter
     * @param refreshSeconds how often to look for new and gone topics, at least 1
     */
    public RdmaBusMetrics(final Bus bus, final Iterable<Tag> extraTags, final long refreshSeconds) {
        if (refreshSeconds < 1) {
            throw new IllegalArgumentException("refreshSeconds must be at least 1, got " + refreshSeconds);
        }
        this.bus = bus;
        this.tags = Tags.of("bus", bus.name(), "transport", bus.transportName()).and(extraTags);
        this.refreshSeconds = refreshSeconds;
    }

    @Override
    public synchronized void bindTo(final MeterRegistry meterRegistry) {
        if (registry != null) {
            throw new IllegalStateException("RdmaBusMetrics of bus " + bus.name() + " is bound already: make one per registry");
        }
        this.registry = meterRegistry;
        FunctionCounter.builder("rdmabus.published", bus, b -> b.stats().messagesPublished()).tags(tags)
            .description("values taken by the bus's publications").baseUnit("messages").register(registry);
        FunctionCounter.builder("rdmabus.dropped.not.connected", bus, b -> b.stats().droppedNotConnected()).tags(tags)
            .description("best-effort values dropped because no subscriber was connected").baseUnit("messages").register(registry);
        refresh();
        refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            final Thread t = new Thread(r, "rdma-bus-metrics-" + bus.name());
            t.setDaemon(true);
            return t;
        });
        refresher.scheduleWithFixedDelay(this::refresh, refreshSeconds, refreshSeconds, TimeUnit.SECONDS);
    }

    /** Registers meters for topics and transport counters that appeared, removes those of topics no longer subscribed. */
    public synchronized void refresh() {
        if (registry == null) {
            return;
        }
        final BusStats stats = bus.stats();
        final Set<String> topics = new java.util.HashSet<>();
        for (final SubscriptionStats s : stats.subscriptions()) {
            topics.add(s.topic());
            topicMeters.computeIfAbsent(s.topic(), this::registerTopic);
        }
        topicMeters.entrySet().removeIf(e -> {
            if (topics.contains(e.getKey())) {
                return false;
            }
            e.getValue().forEach(registry::remove);
            return true;
        });
        for (final String name : stats.transportCounters().keySet()) {
            if (!transportNames.contains(name)) {
                transportNames.add(name);
                registerTransport(name);
            }
        }
    }

    private List<Meter> registerTopic(final String topic) {
        final List<Meter> meters = new ArrayList<>();
        final Tags topicTags = tags.and("topic", topic);
        SUBSCRIPTION_COUNTERS.forEach((name, value) -> meters.add(FunctionCounter.builder("rdmabus.subscription." + name, bus,
            b -> sum(b, topic, value)).tags(topicTags).register(registry)));
        SUBSCRIPTION_GAUGES.forEach((name, value) -> meters.add(Gauge.builder("rdmabus.subscription." + name, bus,
            b -> sum(b, topic, value)).tags(topicTags).register(registry)));
        return meters;
    }

    private static double sum(final Bus bus, final String topic, final ToLongFunction<SubscriptionStats> value) {
        long sum = 0;
        for (final SubscriptionStats s : bus.stats().subscriptions()) {
            if (s.topic().equals(topic)) {
                sum += value.applyAsLong(s);
            }
        }
        return sum;
    }

    private void registerTransport(final String name) {
        final String meterName = "rdmabus.transport." + name.replaceAll("([a-z0-9])([A-Z])", "$1.$2").toLowerCase(java.util.Locale.ROOT);
        if (TRANSPORT_GAUGES.contains(name)) {
            Gauge.builder(meterName, bus, b -> b.stats().transportCounters().getOrDefault(name, 0L)).tags(tags).register(registry);
        } else {
            FunctionCounter.builder(meterName, bus, b -> b.stats().transportCounters().getOrDefault(name, 0L)).tags(tags).register(registry);
        }
    }

    /** Stops looking for new topics; the meters stay registered. */
    @Override
    public synchronized void close() {
        if (refresher != null) {
            refresher.shutdownNow();
        }
    }
}
