package io.rdmabus.transport.tcp;

import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportSubscription;

import org.agrona.DirectBuffer;

/**
 * A local subscriber of one topic. Frames from every connection pass through {@link #deliver}, which holds this
 * object's monitor so the sink sees one thread at a time even with two event loop threads, and so that once
 * {@link #close()} returns the sink is not called again.
 */
final class TcpSubscription implements TransportSubscription {
    private final TcpTransport transport;
    final TopicDescriptor topic;
    private final SubscriptionSink sink;
    private volatile boolean closed;

    TcpSubscription(final TcpTransport transport, final TopicDescriptor topic, final SubscriptionSink sink) {
        this.transport = transport;
        this.topic = topic;
        this.sink = sink;
    }

    int deliver(final DirectBuffer buffer, final int offset, final int length) {
        if (closed) {
            return SubscriptionSink.CONTINUE;
        }
        synchronized (this) {
            if (closed) {
                return SubscriptionSink.CONTINUE;
            }
            return sink.onFrame(buffer, offset, length);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        synchronized (this) {
            closed = true;
        }
        transport.removeSubscription(this);
    }
}
