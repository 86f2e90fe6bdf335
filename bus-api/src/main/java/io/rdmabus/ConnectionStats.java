package io.rdmabus;

import java.util.Map;

/**
 * A snapshot of one live connection of a bus's transport to a peer ({@link BusStats#connections()}).
 *
 * @param id       the connection's id in its transport, unique for the transport's life (a reconnect gets a new one)
 * @param peer     who is at the other end, e.g. {@code "10.0.0.2:4000 (md-feed)"}
 * @param counters the connection's counters by name, in the order its transport documents them
 */
public record ConnectionStats(long id, String peer, Map<String, Long> counters) {
}
