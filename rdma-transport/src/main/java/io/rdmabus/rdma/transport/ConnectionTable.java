package io.rdmabus.rdma.transport;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The transport's RC connections by id, for the poller to find a completion's connection from its wr_id.
 *
 * <p>Owner: the cm agent registers a connection when it builds one (before its receives are posted, so the poller can
 * find the connection of any completion) and unregisters it when it destroys it; after the cm agent has stopped,
 * {@code close()} does. The poller and diagnostics read it. An {@link AtomicReferenceArray}: written by the cm thread,
 * read by the poller without a lock.
 */
final class ConnectionTable {
    /** Slots, a power of two: connection id & (SIZE - 1). */
    static final int SIZE = 4096;

    private final AtomicReferenceArray<Connection> connections = new AtomicReferenceArray<>(SIZE);
    /** The next connection id: only the cm thread takes ids. */
    private int nextId = 1;

    /** @return a new connection id (cm thread) */
    int nextId() {
        return nextId++;
    }

    /**
     * Registers {@code c} under its id (cm thread).
     *
     * @return false if the slot holds a connection not destroyed yet (too many connections)
     */
    boolean register(final Connection c) {
        Connection prev = connections.getAndSet(c.id & (SIZE - 1), c);
        if (prev != null && !prev.destroyed) {
            connections.set(c.id & (SIZE - 1), prev);
            return false;
        }
        return true;
    }

    /** Removes {@code c} if it is still registered (cm thread, or close()). */
    void unregister(final Connection c) {
        connections.compareAndSet(c.id & (SIZE - 1), c, null);
    }

    /** @return the connection with id {@code connectionId}, or null (any thread) */
    Connection get(final int connectionId) {
        Connection c = connections.get(connectionId & (SIZE - 1));
        return c != null && c.id == connectionId ? c : null;
    }

    /** @return the connection in slot {@code slot} (0 .. SIZE-1), or null */
    Connection atSlot(final int slot) {
        return connections.get(slot);
    }

    /** @return live connections (established, not failed): diagnostics */
    List<Connection> live() {
        List<Connection> out = new ArrayList<>();
        for (int i = 0; i < SIZE; i++) {
            Connection c = connections.get(i);
            if (c != null && c.established && !c.closed) {
                out.add(c);
            }
        }
        return out;
    }

    /** @return whether any connection has a posted send whose completion was not polled yet */
    boolean anyOutstanding() {
        for (int i = 0; i < SIZE; i++) {
            Connection c = connections.get(i);
            if (c != null && c.outstandingSends.get() > 0) {
                return true;
            }
        }
        return false;
    }
}
