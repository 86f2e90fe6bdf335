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
 */
public record BusStats(String transport, List<SubscriptionStats> subscriptions, long messagesPublished, long droppedNotConnected,
                       Map<String, Long> transportCounters) {
}
