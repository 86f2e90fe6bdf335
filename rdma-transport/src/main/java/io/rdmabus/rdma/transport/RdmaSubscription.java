package io.rdmabus.rdma.transport;

import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportSubscription;

/** A local subscription: frames of its topic from every connected peer go to its sink, on the poller thread. */
final class RdmaSubscription implements TransportSubscription {
    final TopicDescriptor topic;
    final SubscriptionSink sink;
    private final RdmaTransport transport;
    /** Volatile: the application thread closes it (and the poller at its close), the poller checks it per frame. */
    volatile boolean closed;

    RdmaSubscription(final RdmaTransport transport, final TopicDescriptor topic, final SubscriptionSink sink) {
        this.transport = transport;
        this.topic = topic;
        this.sink = sink;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        transport.removeSubscription(this);
    }
}
