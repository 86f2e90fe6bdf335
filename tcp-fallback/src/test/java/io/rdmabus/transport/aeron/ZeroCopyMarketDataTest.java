package io.rdmabus.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Topic;
import io.rdmabus.codecs.MarketDataCodecs;
import io.rdmabus.codecs.Quote;
import io.rdmabus.codecs.sbe.md.MessageHeaderDecoder;
import io.rdmabus.codecs.sbe.md.QuoteDecoder;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import reactor.core.Disposable;

/**
 * A market-data subscriber that allocates nothing per message: an in-place subscription decodes each SBE quote with
 * reused flyweights straight from Aeron's term buffer (a real media driver, IPC). The receiving thread's own
 * allocation counter (the JVM's per-thread count, read inside the handler) must not grow with the message count in the
 * steady state.
 */
class ZeroCopyMarketDataTest {
    private static final int WARM_UP = 20_000;
    private static final int MEASURED = 100_000;

    @Test
    void anInPlaceSbeSubscriberAllocatesNothingPerMessage() {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final Topic<Quote> topic = Topic.of("md.zero-copy." + ProcessHandle.current().pid(), MarketDataCodecs.quote(), Delivery.RELIABLE);
        final MessageHeaderDecoder header = new MessageHeaderDecoder();
        final QuoteDecoder quote = new QuoteDecoder();
        final AtomicLong received = new AtomicLong();
        final AtomicLong bidSizeSum = new AtomicLong();
        final AtomicLong allocatedAtWarmUpEnd = new AtomicLong(-1);
        final AtomicLong allocatedAtEnd = new AtomicLong(-1);
        try (AeronTckFixture ipc = new AeronTckFixture(AeronTckFixture.Mode.IPC);
             Bus sub = ipc.newBus("zc-sub");
             Bus pub = ipc.newBus("zc-pub")) {
            final Disposable subscription = sub.subscribeInPlace(topic, (buffer, offset, length, h) -> {
                header.wrap(buffer, offset);
                quote.wrap(buffer, offset + MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
                bidSizeSum.lazySet(bidSizeSum.get() + quote.bidSize());
                final long n = received.get() + 1;
                if (n == WARM_UP) {
                    allocatedAtWarmUpEnd.set(threads.getCurrentThreadAllocatedBytes());
                } else if (n == WARM_UP + MEASURED) {
                    allocatedAtEnd.set(threads.getCurrentThreadAllocatedBytes());
                }
                received.lazySet(n);
            });
            try (BusPublication<Quote> publication = pub.publication(topic)) {
                Awaitility.await("publication connected").atMost(Duration.ofSeconds(15)).until(publication::isConnected);
                final Quote q = new Quote(42, 1L, 101_250_000_000L, 101_260_000_000L, 3, 5, 7);
                for (int i = 0; i < WARM_UP + MEASURED; i++) {
                    while (publication.offer(q) != PublishStatus.OK) {
                        Thread.onSpinWait();
                    }
                }
                Awaitility.await("all quotes in the handler").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                    .until(() -> received.get() == WARM_UP + MEASURED);
            }
            subscription.dispose();
        }
        assertEquals(3L * (WARM_UP + MEASURED), bidSizeSum.get(), "every quote decoded");
        final long perMessage = (allocatedAtEnd.get() - allocatedAtWarmUpEnd.get()) / MEASURED;
        assertTrue(perMessage == 0, "the receiving thread allocated " + (allocatedAtEnd.get() - allocatedAtWarmUpEnd.get())
            + " bytes over " + MEASURED + " in-place quotes after the warm-up (" + perMessage + " per message)");
    }
}
