package io.rdmabus.core;

import org.agrona.ExpandableDirectByteBuffer;

/**
 * One ring slot: a whole (reassembled) message copied off the transport's receive buffer. Slots are preallocated
 * and their buffers grow once to the largest message seen, so the steady state allocates nothing.
 */
final class FrameEvent {
    final ExpandableDirectByteBuffer payload = new ExpandableDirectByteBuffer(256);
    int length;
    int sessionId;
    long sequence;
    long timestampNs;
    long lostBefore;
}
