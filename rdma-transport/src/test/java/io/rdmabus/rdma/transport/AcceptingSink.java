package io.rdmabus.rdma.transport;

import io.rdmabus.spi.SubscriptionSink;

/**
 * A test sink that takes every frame (never back-pressures, like the bus's best-effort sinks) and prints transport
 * errors; subclasses say what {@code onFrame} records.
 */
abstract class AcceptingSink implements SubscriptionSink {
    @Override
    public long availableCredits() {
        return Long.MAX_VALUE;
    }

    @Override
    public void onTransportError(final Throwable cause) {
        cause.printStackTrace();
    }
}
