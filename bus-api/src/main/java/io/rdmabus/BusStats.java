package io.rdmabus;

import java.util.List;
import java.util.Map;

/**
 * A snapshot of a bus's counters.
 *
 * @param transport          the transport's name
 * @param subscriptions      one entry per live subscription
 * @param messagesPublished  values taken by this bus's publications
 * @param droppedNotConnected best-effort values dropped because no subscriber was connected
 * @param transportCounters  the transport's own counters (drops and refusals below the bus), see its documentation
 * @param connections        the transport's live connections to peers with their counters (empty for a transport without
 *                           connections of its own, e.g. Aeron)
 */
public record BusStats(String transport, List<SubscriptionStats> subscriptions, long messagesPublished, long droppedNotConnected,
                       Map<String, Long> transportCounters, List<ConnectionStats> connections) {
    /** A snapshot without connections. */
    public BusStats(final String transport, final List<SubscriptionStats> subscriptions, final long messagesPublished,
                    final long droppedNotConnected, final Map<String, Long> transportCounters) {
        this(transport, subscriptions, messagesPublished, droppedNotConnected, transportCounters, List.of());
    }
}
