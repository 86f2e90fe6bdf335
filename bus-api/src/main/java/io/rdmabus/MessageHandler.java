package io.rdmabus;

import org.agrona.DirectBuffer;

/**
 * A zero-copy subscriber ({@link Bus#subscribeInPlace}): reads each message where the transport received it (the
 * registered RDMA receive buffer, Aeron's term buffer, the TCP read buffer), on the transport's receiving thread. Decode
 * with a flyweight (e.g. an SBE decoder wrapped over {@code buffer}) and the subscriber allocates nothing per message.
 *
 * <p>The view is valid only until the method returns: the transport reuses the buffer (re-posts the RDMA receive, moves
 * on in the term) right after. Copy what must outlive the call. The method must not block: it runs on the thread that
 * receives for every subscription of the bus's transport; a message that arrives while it runs waits, and for a reliable
 * topic the publisher is held back by exactly that.
 */
@FunctionalInterface
public interface MessageHandler {
    /**
     * @param buffer the receive buffer, valid during this call only
     * @param offset first byte of the message (the payload, after the bus's frame header)
     * @param length message length in bytes
     * @param header where the message came from; the same object every call, valid during this call only
     */
    void onMessage(DirectBuffer buffer, int offset, int length, MessageHeader header);
}
