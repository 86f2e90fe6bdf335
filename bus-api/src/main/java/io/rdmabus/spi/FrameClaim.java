package io.rdmabus.spi;

import org.agrona.MutableDirectBuffer;

/**
 * Space claimed in a transport-owned send buffer (possibly registered with a NIC) by
 * {@link TransportPublication#tryClaim}. Write exactly {@link #length()} bytes at {@link #offset()} of
 * {@link #buffer()}, then call {@link #commit()} (send) or {@link #abort()} (discard). A claim object is
 * reused by its publication: it is valid only until commit/abort, and only on the claiming thread.
 */
public interface FrameClaim {
    /** @return the buffer to write the frame (header + payload) into */
    MutableDirectBuffer buffer();

    /** @return where the frame starts in {@link #buffer()} */
    int offset();

    /** @return the claimed frame length in bytes */
    int length();

    /** Sends the frame. The buffer returns to the transport's pool when the send completes, not now. */
    void commit();

    /** Discards the claim; nothing is sent. */
    void abort();
}
