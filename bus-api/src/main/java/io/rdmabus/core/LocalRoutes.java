package io.rdmabus.core;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Same-bus loopback for a transport that does not loop back ({@code TransportCapabilities.loopback() == false}): the
 * bus's own subscriptions of each topic, which the bus's own publications of that topic hand their messages to
 * directly ({@link LocalDelivery}). Control path only: subscriptions are added and removed under this object's lock and
 * published as a new array (copy on write), which publishers read without a lock.
 */
final class LocalRoutes {
    private static final SubscriptionChannel<?>[] NONE = new SubscriptionChannel<?>[0];
    private final ConcurrentHashMap<Integer, Route> routes = new ConcurrentHashMap<>();

    /** The bus's subscriptions of one topic id. */
    static final class Route {
        volatile SubscriptionChannel<?>[] channels = NONE;
    }

    /** @param topicId a topic id @return its route, created on first use (one per topic id the bus used) */
    Route route(final int topicId) {
        return routes.computeIfAbsent(topicId, id -> new Route());
    }

    synchronized void add(final int topicId, final SubscriptionChannel<?> channel) {
        final Route route = route(topicId);
        final SubscriptionChannel<?>[] old = route.channels;
        final SubscriptionChannel<?>[] copy = Arrays.copyOf(old, old.length + 1);
        copy[old.length] = channel;
        route.channels = copy;
    }

    synchronized void remove(final int topicId, final SubscriptionChannel<?> channel) {
        final Route route = route(topicId);
        final SubscriptionChannel<?>[] old = route.channels;
        route.channels = Arrays.stream(old).filter(c -> c != channel).toArray(SubscriptionChannel<?>[]::new);
    }
}
