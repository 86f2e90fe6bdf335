package io.rdmabus.transport.aeron;

import java.util.List;

import io.aeron.Subscription;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.Header;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TransportSubscription;

import org.agrona.DirectBuffer;

/**
 * One bus subscription: one or more Aeron subscriptions (one per publisher control endpoint for UDP unicast)
 * polled by the transport's receive agent with {@code controlledPoll}, so that {@link SubscriptionSink#BACK_PRESSURE}
 * becomes {@link ControlledFragmentHandler.Action#ABORT}: the frame stays in the log, is offered again on the next
 * poll, and the image position does not advance, which closes the receiver window and back-pressures the publisher.
 */
final class AeronSubscription implements TransportSubscription, ControlledFragmentHandler {
    private final AeronTransport transport;
    private final SubscriptionSink sink;
    private final List<Subscription> subscriptions;
    private volatile boolean closed;
    private boolean backPressured;
    /** Frames the sink took during the poll in progress, and their bytes: added to the counters as the poll ends. Receive agent. */
    private long polledFrames;
    private long polledBytes;
    /** The transport's counters; this subscription writes the receive ones on the receive agent. */
    private final java.util.concurrent.atomic.AtomicLongArray counters;

    AeronSubscription(final AeronTransport transport, final SubscriptionSink sink, final List<Subscription> subscriptions,
                      final java.util.concurrent.atomic.AtomicLongArray counters) {
        this.transport = transport;
        this.sink = sink;
        this.subscriptions = subscriptions;
        this.counters = counters;
    }

    /**
     * Polls every Aeron subscription once; called on the receive agent only.
     *
     * @param fragmentLimit most fragments per Aeron subscription
     * @return fragments consumed
     */
    int poll(final int fragmentLimit) {
        int work = 0;
        try {
            for (int i = 0, n = subscriptions.size(); i < n; i++) {
                backPressured = false;
                work += subscriptions.get(i).controlledPoll(this, fragmentLimit);
            }
        } finally {
            if (polledFrames > 0) { // the poll's frames counted once, not at every frame
                AeronCounter.FRAMES_RECEIVED.add(counters, polledFrames);
                AeronCounter.BYTES_RECEIVED.add(counters, polledBytes);
                polledFrames = 0;
                polledBytes = 0;
            }
        }
        return work;
    }

    @Override
    public Action onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        if (backPressured) {
            return Action.ABORT; // the sink is full: do not offer later frames of this poll
        }
        if (sink.onFrame(buffer, offset, length) == SubscriptionSink.BACK_PRESSURE) {
            backPressured = true;
            AeronCounter.RECEIVE_BACK_PRESSURED.add(counters, 1);
            return Action.ABORT;
        }
        polledFrames++;
        polledBytes += length;
        return Action.CONTINUE;
    }

    SubscriptionSink sink() {
        return sink;
    }

    List<Subscription> aeronSubscriptions() {
        return subscriptions;
    }

    boolean isClosed() {
        return closed;
    }

    /** Removes the subscription from the receive agent (waiting for it) and closes the Aeron subscriptions. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        transport.onSubscriptionClosed(this);
    }
}
