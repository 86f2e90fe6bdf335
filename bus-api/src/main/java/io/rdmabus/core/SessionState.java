package io.rdmabus.core;

import org.agrona.ExpandableDirectByteBuffer;

/** Receive-side state of one publisher session on one subscription: expected sequence and reassembly. */
final class SessionState {
    long nextSequence = -1;
    long lostPending;
    final ExpandableDirectByteBuffer reassembly = new ExpandableDirectByteBuffer(0);
    int reassemblyLength = -1;
    long reassemblyFirstSequence;
    long reassemblyTimestampNs;
}
