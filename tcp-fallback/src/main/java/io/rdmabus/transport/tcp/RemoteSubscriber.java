package io.rdmabus.transport.tcp;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A peer's subscription to one topic of this node, as the publishing side sees it: the connection to send on and, for a
 * reliable topic, the credit the peer granted (bytes of DATA messages this node may still send it for this topic;
 * {@code TcpProtocol}, SUBSCRIBE and CREDIT).
 *
 * <p>Threads: created and granted credit on the connection's event loop; credit reserved and refunded by publishing
 * threads (any number of publications of the topic), hence an atomic.
 */
final class RemoteSubscriber {
    final PeerConnection connection;
    final boolean reliable;
    private final AtomicLong credit;

    /**
     * @param connection  the peer's connection
     * @param reliable    the peer subscribed the topic as reliable
     * @param windowBytes the window the peer granted in its SUBSCRIBE (reliable only)
     */
    RemoteSubscriber(final PeerConnection connection, final boolean reliable, final long windowBytes) {
        this.connection = connection;
        this.reliable = reliable;
        this.credit = new AtomicLong(windowBytes);
    }

    /**
     * @param bytes a whole DATA message's length on the wire
     * @return true if the credit covered it and was taken
     */
    boolean tryReserve(final long bytes) {
        while (true) {
            final long available = credit.get();
            if (available < bytes) {
                return false;
            }
            if (credit.compareAndSet(available, available - bytes)) {
                return true;
            }
        }
    }

    /** Gives back a reservation whose message was never sent. */
    void refund(final long bytes) {
        credit.addAndGet(bytes);
    }

    /** The peer's CREDIT: its subscriptions took {@code bytes} more. */
    void grant(final long bytes) {
        credit.addAndGet(bytes);
    }

    /** @return bytes this node may still send for the topic (a diagnostic read) */
    long credit() {
        return credit.get();
    }
}
