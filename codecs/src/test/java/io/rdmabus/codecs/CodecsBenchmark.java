package io.rdmabus.codecs;

import io.rdmabus.codec.Codec;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A rough single-threaded timing of encode and decode per codec (not a JUnit test, not run by the build), best of
 * {@value #ROUNDS} rounds, as wall-clock and as thread CPU time per operation. For real decisions use JMH; this is
 * enough to see the order of magnitude and regressions. Run it as described in
 * {@code codecs/README.md}.
 */
public final class CodecsBenchmark {
    private static final int ROUNDS = 10;
    private static final int OPS_PER_ROUND = 2_000_000;
    /** CPU time of the measuring thread: on a shared, overloaded machine it excludes time spent descheduled. */
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static volatile Object sink;

    private CodecsBenchmark() {
    }

    private static String filter = "";

    /**
     * @param args optional: only run rows whose label contains {@code args[0]} (one codec per JVM avoids a
     *             megamorphic call site and lets the JIT settle on it alone)
     */
    public static void main(final String[] args) {
        filter = args.length > 0 ? args[0] : "";
        System.out.printf(Locale.ROOT, "%-28s %12s %12s %12s %12s %8s%n",
            "codec / value", "enc wall ns", "enc cpu ns", "dec wall ns", "dec cpu ns", "bytes");
        run("sbe-md-quote", MarketDataCodecs.quote(), MarketDataCodecsTest.QUOTE);
        run("sbe-md-trade", MarketDataCodecs.trade(), MarketDataCodecsTest.TRADE);
        run("sbe-md-book-level-update", MarketDataCodecs.bookLevelUpdate(), MarketDataCodecsTest.BOOK);
        run("sbe-md-any (quote)", MarketDataCodecs.any(), MarketDataCodecsTest.QUOTE);
        run("utf8 ascii 32", Codecs.utf8(), "x".repeat(32));
        run("utf8 mixed 32 chars", Codecs.utf8(), "caf\u00E9 \u20AC12 \u65E5\u672C\u8A9E \uD83D\uDE00 mixed text here!");
        run("bytes 64", Codecs.bytes(), new byte[64]);
    }

    private static <T> void run(final String label, final Codec<T> codec, final T value) {
        if (!label.contains(filter)) {
            return;
        }
        final int length = codec.encodedLength(value);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[length + 64]);
        final double[] encodeNs = {Double.MAX_VALUE, Double.MAX_VALUE};
        final double[] decodeNs = {Double.MAX_VALUE, Double.MAX_VALUE};
        for (int round = 0; round < ROUNDS; round++) {
            long wall = System.nanoTime();
            long cpu = THREADS.getCurrentThreadCpuTime();
            for (int i = 0; i < OPS_PER_ROUND; i++) {
                codec.encode(value, buffer, 32);
            }
            encodeNs[0] = Math.min(encodeNs[0], (double) (System.nanoTime() - wall) / OPS_PER_ROUND);
            encodeNs[1] = Math.min(encodeNs[1], (double) (THREADS.getCurrentThreadCpuTime() - cpu) / OPS_PER_ROUND);
            wall = System.nanoTime();
            cpu = THREADS.getCurrentThreadCpuTime();
            for (int i = 0; i < OPS_PER_ROUND; i++) {
                sink = codec.decode(buffer, 32, length);
            }
            decodeNs[0] = Math.min(decodeNs[0], (double) (System.nanoTime() - wall) / OPS_PER_ROUND);
            decodeNs[1] = Math.min(decodeNs[1], (double) (THREADS.getCurrentThreadCpuTime() - cpu) / OPS_PER_ROUND);
        }
        System.out.printf(Locale.ROOT, "%-28s %12.1f %12.1f %12.1f %12.1f %8d%n",
            label, encodeNs[0], encodeNs[1], decodeNs[0], decodeNs[1], length);
    }
}
