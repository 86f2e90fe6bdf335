package io.rdmabus.codecs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.codec.Codec;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The hot path must not produce garbage: encoding allocates nothing (no intermediate arrays, flyweights are per
 * thread), and decoding allocates only the decoded value. Measured with the JVM's per-thread allocation counter,
 * which counts every allocation whether the code runs interpreted or compiled.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AllocationTest {
    private static final int WARMUP = 20_000;
    private static final int MEASURED = 100_000;
    private static com.sun.management.ThreadMXBean threads;

    @BeforeAll
    static void allocationCounter() {
        final java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(bean instanceof com.sun.management.ThreadMXBean,
            "this JVM has no per-thread allocation counter");
        threads = (com.sun.management.ThreadMXBean) bean;
        Assumptions.assumeTrue(threads.isThreadAllocatedMemorySupported(), "per-thread allocation counting unsupported");
        threads.setThreadAllocatedMemoryEnabled(true);
    }

    /** @return bytes allocated per call of {@code op}, averaged over {@link #MEASURED} calls after a warm-up */
    private static double bytesPerOp(final Runnable op) {
        for (int i = 0; i < WARMUP; i++) {
            op.run();
        }
        final long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < MEASURED; i++) {
            op.run();
        }
        return (double) (threads.getCurrentThreadAllocatedBytes() - before) / MEASURED;
    }

    private static <T> void assertEncodeAllocatesNothing(final Codec<T> codec, final T value) {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[codec.encodedLength(value) + 16]);
        final double perOp = bytesPerOp(() -> codec.encode(value, buffer, 8));
        assertTrue(perOp < 1.0, codec.name() + " encode allocated " + perOp + " bytes/op");
    }

    @Test
    void encodingAllocatesNothing() {
        assertEncodeAllocatesNothing(MarketDataCodecs.quote(), MarketDataCodecsTest.QUOTE);
        assertEncodeAllocatesNothing(MarketDataCodecs.trade(), MarketDataCodecsTest.TRADE);
        assertEncodeAllocatesNothing(MarketDataCodecs.bookLevelUpdate(), MarketDataCodecsTest.BOOK);
        assertEncodeAllocatesNothing(MarketDataCodecs.any(), MarketDataCodecsTest.QUOTE);
        assertEncodeAllocatesNothing(Codecs.utf8(), "price update \u00E9\u20AC\uD83D\uDE00 for instrument 42");
        assertEncodeAllocatesNothing(Codecs.bytes(), new byte[100]);
    }

    @Test
    void decodingAllocatesOnlyTheValue() {
        final UnsafeBuffer quote = new UnsafeBuffer(new byte[MarketDataCodecs.QUOTE_LENGTH]);
        MarketDataCodecs.quote().encode(MarketDataCodecsTest.QUOTE, quote, 0);
        final Object[] sink = new Object[1];
        final double quoteBytes = bytesPerOp(() -> sink[0] = MarketDataCodecs.quote().decode(quote, 0, quote.capacity()));
        // a Quote record is an object header plus 7 longs: 72 bytes with 12-byte headers, 64 with compact headers
        assertTrue(quoteBytes <= 80.0, "Quote decode allocated " + quoteBytes + " bytes/op");
        final double anyBytes = bytesPerOp(() -> sink[0] = MarketDataCodecs.any().decode(quote, 0, quote.capacity()));
        assertTrue(anyBytes <= 80.0, "any() decode allocated " + anyBytes + " bytes/op");
        assertEquals(MarketDataCodecsTest.QUOTE, sink[0]);
    }
}
