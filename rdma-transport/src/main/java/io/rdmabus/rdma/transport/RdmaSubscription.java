package io.rdmabus.rdma.transport;

import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportSubscription;

import java.util.function.Consumer;

/** A local subscription: frames of its topic from every connected peer go to its sink, on the poller thread. */
final class RdmaSubscription implements TransportSubscription {
    final TopicDescriptor topic;
    final SubscriptionSink sink;
    /** The largest frame the transport announced for the topic's delivery: what the poller validates a frame against. */
    final int maxFrameLength;
    /** Takes the subscription out of the poller and the UD path (the transport's removal; any thread). */
    private final Consumer<RdmaSubscription> onClose;
    /** Volatile: the application thread closes it (and the poller at its close), the poller checks it per frame. */
    volatile boolean closed;

    RdmaSubscription(final TopicDescriptor topic, final SubscriptionSink sink, final int maxFrameLength,
                     final Consumer<RdmaSubscription> onClose) {
        this.topic = topic;
        this.sink = sink;
        this.maxFrameLength = maxFrameLength;
        this.onClose = onClose;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        onClose.accept(this);
    }
}
