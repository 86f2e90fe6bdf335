package io.rdmabus.samples.marketdata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs the market-data sample for ~3 s on aeron-ipc (real transport, one shared media driver). */
class MarketDataSampleTest {
    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void tradesArriveWithoutLossAndQuotesAreReceived() throws InterruptedException {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final MarketDataSample.Settings settings = new MarketDataSample.Settings("aeron-ipc", TimeUnit.SECONDS.toNanos(3), 8, 5_000, 500,
            1_000, 5, TimeUnit.MICROSECONDS.toNanos(200));
        final MarketDataSample.Result result;
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            result = MarketDataSample.run(settings, out);
        }
        final String output = bytes.toString(StandardCharsets.UTF_8);
        assertEquals("aeron-ipc", result.transport(), output);
        assertTrue(result.tradesSent() > 100, "the feed published trades: " + output);
        assertEquals(2, result.subscribers().size());
        for (final MarketDataSample.SubscriberResult s : result.subscribers()) {
            assertEquals(result.tradesSent(), s.tradesReceived(), s.role() + " got every trade: " + output);
            assertEquals(0, s.tradesLost(), s.role() + " lost no trade: " + output);
            assertEquals(0, s.tradeStats().gapMessages(), s.role() + " trade gaps: " + output);
            assertTrue(s.quotesReceived() > 0, s.role() + " received quotes: " + output);
            assertTrue(s.quoteLatencyNs().getTotalCount() > 0, s.role() + " measured latency: " + output);
        }
        assertTrue(result.tradesComplete(), output);
        // each subscriber's quote line adds up to the quotes sent, and its trade line to the bus's count
        assertEquals(2, output.split(String.format("= %,d sent", result.quotesSent()), -1).length - 1, output);
        assertTrue(!output.contains("does NOT add up"), output);
        assertTrue(output.contains("transport: aeron-ipc"), output);
        assertTrue(output.contains("OK: every trade reached every subscriber"), output);
        // the order book started half-way: every instrument at once from the last-value cache, then the live quotes
        final LateOrderBook.Result late = result.lateBook();
        assertTrue(late != null, "the late book saw no live quote after its snapshot: " + output);
        assertEquals(8, late.instrumentsAtSeam(), "instruments from the snapshot: " + output);
        assertTrue(late.seamHolds(), "seam (a duplicate, or a gap not reported): " + output);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void badFlagsGiveUsageAndExitCode2() {
        final var cli = io.rdmabus.samples.cli.CliSupport.commandLine(new MarketDataSample());
        final java.io.StringWriter err = new java.io.StringWriter();
        cli.setErr(new java.io.PrintWriter(err));
        assertEquals(2, cli.execute("--rate", "lots"));
        assertTrue(err.toString().contains("--rate"), err.toString());
        assertEquals(2, cli.execute("--instruments", "0"));
        assertTrue(err.toString().contains("--instruments must be in 1..100000"), err.toString());
    }
}
