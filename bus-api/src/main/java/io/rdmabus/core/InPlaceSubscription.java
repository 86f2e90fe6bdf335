package io.rdmabus.core;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import io.rdmabus.BusException;
import io.rdmabus.MessageHandler;
import io.rdmabus.MessageHeader;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.spi.TransportSubscription;

import org.agrona.DirectBuffer;

import reactor.core.Disposable;

/**
 * A zero-copy subscription: each whole message goes straight from the transport's receive buffer to the handler, on the
 * transport's receive thread ({@link io.rdmabus.Bus#subscribeInPlace}). No ring, no second thread, no allocation.
 *
 * <p>Owner: the transport's receive thread (the {@link FrameReceiver} state and {@link #header}); {@link #dispose()} from
 * any thread.
 */
final class InPlaceSubscription extends FrameReceiver implements Disposable {
    private final MessageHandler handler;
    private final Consumer<Throwable> errorHandler;
    private final Consumer<InPlaceSubscription> onDispose;
    private final Header header = new Header();
    private final AtomicLong delivered = new AtomicLong();
    volatile TransportSubscription transportSubscription;
    /** This subscription's counters in the bus's counters file, or null; closed when it is disposed. */
    volatile io.rdmabus.counters.BusCounters.Scope countersScope;

    /**
     * @param errorHandler where a handler's exception and the transport's unrecoverable errors go (the bus's)
     * @param onDispose    run once when disposed (the bus forgets the subscription)
     */
    InPlaceSubscription(final Topic<?> topic, final int maxFrameLength, final MessageHandler handler,
                        final Consumer<Throwable> errorHandler, final Consumer<InPlaceSubscription> onDispose) {
        super(topic, maxFrameLength);
        this.handler = handler;
        this.errorHandler = errorHandler;
        this.onDispose = onDispose;
    }

    @Override
    long tryClaim() {
        return 0; // the handler takes every message as it comes
    }

    @Override
    void publish(final long slot, final DirectBuffer src, final int srcOffset, final int length, final int sessionId, final long sequence,
                 final long timestampNs, final long lostBefore) {
        header.sessionId = sessionId;
        header.sequence = sequence;
        header.timestampNs = timestampNs;
        header.lostBefore = lostBefore;
        increment(delivered);
        try {
            handler.onMessage(src, srcOffset, length, header);
        } catch (final RuntimeException ex) {
            errorHandler.accept(new BusException("in-place handler of topic '" + topic.name() + "' threw on session "
                + Integer.toHexString(sessionId) + " sequence " + sequence + ": " + ex, ex));
        }
    }

    @Override
    void skip(final long slot) {
        // nothing was claimed
    }

    @Override
    public long availableCredits() {
        return Integer.MAX_VALUE; // no buffer of its own: the handler consumes as frames arrive
    }

    @Override
    public void onTransportError(final Throwable cause) {
        errorHandler.accept(cause);
        dispose();
    }

    @Override
    public void dispose() {
        if (closed) {
            return;
        }
        closed = true;
        final TransportSubscription sub = transportSubscription;
        if (sub != null) {
            sub.close();
        }
        onDispose.accept(this);
    }

    @Override
    public boolean isDisposed() {
        return closed;
    }

    /**
     * @param v the counters file's subscription counters, in the order of {@code CountersFile.SUBSCRIPTION_COUNTERS}: those
     *          of a copying subscription, with ring capacity and free 0 (no ring: the handler runs on the receive thread)
     */
    void sampleCounters(final long[] v) {
        v[0] = framesReceived.get();
        v[1] = bytesReceived.get();
        v[2] = delivered.get();
        v[3] = malformed.get();
        v[4] = gaps.get();
        v[5] = dropped.get();
        v[6] = duplicates.get();
        v[7] = 0;
        v[8] = 0;
        v[9] = sessionsForgotten.get();
    }

    SubscriptionStats stats() {
        return new SubscriptionStats(topic.name(), framesReceived.get(), delivered.get(), malformed.get(), gaps.get(), dropped.get(),
            duplicates.get(), 0, 0);
    }

    /** The handler's view of the current message's origin: rewritten for each message. */
    private static final class Header implements MessageHeader {
        int sessionId;
        long sequence;
        long timestampNs;
        long lostBefore;

        @Override
        public int sessionId() {
            return sessionId;
        }

        @Override
        public long sequence() {
            return sequence;
        }

        @Override
        public long timestampNs() {
            return timestampNs;
        }

        @Override
        public long lostBefore() {
            return lostBefore;
        }
    }
}
