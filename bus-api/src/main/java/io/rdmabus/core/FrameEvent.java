package io.rdmabus.core;

import org.agrona.ExpandableArrayBuffer;

/**
 * One ring slot: a whole (reassembled) message copied off the transport's receive buffer. Slots are preallocated
 * and their buffers grow once to the largest message seen, so the steady state allocates nothing.
 *
 * <p>The payload is a heap buffer, not a direct one: a direct buffer per slot is a JDK cleaner per slot (1024 per
 * default subscription), and the Reference Handler thread runs every dead one inline, one by one, at the GC that finds
 * the ring dead. Under emulation (rxe lab) that backlog kept every other reference cleared by the same GC from being
 * enqueued for seconds: RS TCK rule 3.13 waits only 100 ms after its {@code System.gc()} (docs/rdma-transport-history.md, "RS rule 3.13").
 */
final class FrameEvent {
    final ExpandableArrayBuffer payload = new ExpandableArrayBuffer(256);
    int length;
    int sessionId;
    long sequence;
    long timestampNs;
    long lostBefore;
}
