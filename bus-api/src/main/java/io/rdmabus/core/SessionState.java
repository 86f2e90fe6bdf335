package io.rdmabus.core;

import org.agrona.ExpandableDirectByteBuffer;

/** Receive-side state of one publisher session on one subscription: expected sequence, suspect and reassembly. */
final class SessionState {
    /** The sequence expected next; -1 until the session's first frame. */
    long nextSequence = -1;
    /** The sequence of a dropped frame that jumped ahead and awaits the session's next frame to decide it; -1 if none. */
    long suspectSequence = -1;
    long lostPending;
    /** Fragments of the message being reassembled; created by the session's first fragmented message. */
    private ExpandableDirectByteBuffer reassembly;
    int reassemblyLength = -1;
    long reassemblyFirstSequence;
    long reassemblyTimestampNs;
    /** The subscription's frame clock when its frames last switched to this session: which sessions were idle longest. */
    long lastActive;

    ExpandableDirectByteBuffer reassembly() {
        if (reassembly == null) {
            reassembly = new ExpandableDirectByteBuffer(0);
        }
        return reassembly;
    }
}
