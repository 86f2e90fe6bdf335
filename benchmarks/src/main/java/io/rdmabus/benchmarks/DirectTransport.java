package io.rdmabus.benchmarks;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rdmabus.spi.FrameClaim;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportCapabilities;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;
import io.rdmabus.spi.TransportSubscription;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A benchmark-only transport with no medium at all: {@code commit()} hands the frame to every subscribed sink of the
 * topic on the publisher's thread. Buses that share one {@link Medium} reach each other. It isolates the bus's own
 * hot path (frame in, header check, decode, ring, {@code Flux} delivery) from any real transport's cost. A sink that
 * answers BACK_PRESSURE (its ring is full) is offered the frame again, on the publisher's thread, which yields between
 * tries, until it takes it or the transport closes: this transport has no thread of its own to retry later, and a frame
 * left pending for the publisher's next offer would never arrive if that offer never came (the benchmark's last one).
 */
final class DirectTransport implements Transport {
    private static final int MAX_FRAME_BYTES = 64 * 1024;

    /** Where buses of one benchmark meet. */
    static final class Medium {
        private final Map<Integer, List<SubscriptionSink>> sinks = new ConcurrentHashMap<>();

        List<SubscriptionSink> sinks(final int topicId) {
            return sinks.computeIfAbsent(topicId, k -> new CopyOnWriteArrayList<>());
        }
    }

    private final Medium medium;
    private volatile boolean closed;

    DirectTransport(final Medium medium) {
        this.medium = medium;
    }

    @Override
    public String name() {
        return "direct";
    }

    @Override
    public TransportCapabilities capabilities() {
        return new TransportCapabilities(MAX_FRAME_BYTES, MAX_FRAME_BYTES, false, false);
    }

    @Override
    public void start(final TransportContext context) {
        // no threads: frames move on the publisher's thread
    }

    @Override
    public TransportPublication addPublication(final TopicDescriptor topic) {
        return new Publication(medium.sinks(topic.topicId()));
    }

    @Override
    public TransportSubscription addSubscription(final TopicDescriptor topic, final SubscriptionSink sink) {
        final List<SubscriptionSink> list = medium.sinks(topic.topicId());
        list.add(sink);
        return () -> list.remove(sink);
    }

    @Override
    public void close() {
        closed = true;
    }

    private final class Publication implements TransportPublication, FrameClaim {
        private final List<SubscriptionSink> sinks;
        private final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(MAX_FRAME_BYTES));
        private int length;
        private boolean publicationClosed;

        Publication(final List<SubscriptionSink> sinks) {
            this.sinks = sinks;
        }

        @Override
        public int tryClaim(final int frameLength) {
            if (closed || publicationClosed) {
                return TransportStatus.CLOSED;
            }
            if (frameLength > MAX_FRAME_BYTES) {
                return TransportStatus.FRAME_TOO_LARGE;
            }
            if (sinks.isEmpty()) {
                return TransportStatus.NOT_CONNECTED;
            }
            length = frameLength;
            return TransportStatus.OK;
        }

        @Override
        public FrameClaim claim() {
            return this;
        }

        @Override
        public int maxFrameLength() {
            return MAX_FRAME_BYTES;
        }

        @Override
        public boolean isConnected() {
            return !sinks.isEmpty();
        }

        @Override
        public void close() {
            publicationClosed = true;
        }

        @Override
        public MutableDirectBuffer buffer() {
            return buffer;
        }

        @Override
        public int offset() {
            return 0;
        }

        @Override
        public int length() {
            return length;
        }

        /** Hands the frame to every sink in turn, each until it takes it (or the transport closes). */
        @Override
        public void commit() {
            final List<SubscriptionSink> current = sinks;
            for (int i = 0; i < current.size(); i++) {
                while (current.get(i).onFrame(buffer, 0, length) == SubscriptionSink.BACK_PRESSURE && !closed) {
                    Thread.yield(); // 2 cores: let the delivering thread drain the ring
                }
            }
        }

        @Override
        public void abort() {
            length = 0;
        }
    }
}
