package io.rdmabus.soak.fuzz;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportCapabilities;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportSubscription;

/**
 * A transport whose "wire" is the test: it hands the bus's real subscription sinks to the test, which calls
 * {@link SubscriptionSink#onFrame} from its own thread as a transport's receive loop would. Publications are not
 * supported (the fuzzer is the only publisher).
 */
final class InjectingTransport implements Transport {
    private final TransportCapabilities capabilities;
    private final Map<Integer, SubscriptionSink> sinks = new ConcurrentHashMap<>();

    InjectingTransport(final int maxBestEffortFrame, final int maxReliableFrame) {
        this.capabilities = new TransportCapabilities(maxBestEffortFrame, maxReliableFrame, false, false);
    }

    @Override
    public String name() {
        return "fuzz-injector";
    }

    @Override
    public TransportCapabilities capabilities() {
        return capabilities;
    }

    @Override
    public void start(final TransportContext context) {
        // nothing to start: the test thread is the receive loop
    }

    @Override
    public TransportPublication addPublication(final TopicDescriptor topic) {
        throw new UnsupportedOperationException("the fuzz injector only receives");
    }

    @Override
    public TransportSubscription addSubscription(final TopicDescriptor topic, final SubscriptionSink sink) {
        sinks.put(topic.topicId(), sink);
        return () -> sinks.remove(topic.topicId(), sink);
    }

    /** @param topicId topic @return the bus's sink for it, or null before the bus subscribed */
    SubscriptionSink sink(final int topicId) {
        return sinks.get(topicId);
    }

    @Override
    public void close() {
        sinks.clear();
    }
}
