package io.rdmabus;

import java.util.List;

/**
 * A snapshot of a bus's counters.
 *
 * @param transport          the transport's name
 * @param subscriptions      one entry per live subscription
 * @param messagesPublished  values taken by this bus's publications
 * @param droppedNotConnected best-effort values dropped because no subscriber was connected
 */
public record BusStats(String transport, List<SubscriptionStats> subscriptions, long messagesPublished, long droppedNotConnected) {
}
