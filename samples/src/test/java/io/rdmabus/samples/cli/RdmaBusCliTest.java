package io.rdmabus.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.rdmabus.TransportException;
import io.rdmabus.counters.BusCounters;

import picocli.CommandLine;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Runs the {@code rdma-bus} commands in this process, the way the launcher does. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaBusCliTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(final String... args) {
        final CommandLine cli = CliSupport.commandLine(new RdmaBusCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void unknownFlagGivesUsageAndExit2WithoutStackTrace() {
        assertEquals(2, run("ping", "--no-such-flag"));
        assertTrue(err.toString().contains("Unknown option: '--no-such-flag'"), err.toString());
        assertTrue(err.toString().contains("Usage: rdma-bus ping"), err.toString());
        assertFalse(err.toString().contains("\tat "), "no stack trace: " + err);
    }

    @Test
    void badValuesGiveUsageAndExit2() {
        assertEquals(2, run("throughput", "--sizes", "64,abc"));
        assertTrue(err.toString().contains("--sizes"), err.toString());
        assertEquals(2, run("ping", "--size", "8"));
        assertTrue(err.toString().contains("--size in 16.."), err.toString());
        assertEquals(2, run("sub", "--topic", "x", "--delivery", "sometimes"));
        assertTrue(err.toString().contains("use 'reliable' or 'best-effort'"), err.toString());
        assertEquals(2, run("pub"));
        assertTrue(err.toString().contains("Missing required option: '--topic=<topicName>'"), err.toString());
    }

    @Test
    void unknownCommandOrNoneGivesExit2() {
        assertEquals(2, run("frobnicate"));
        assertTrue(err.toString().startsWith("Unknown command: 'frobnicate'\nCommands: devices, ping, "), err.toString());
        assertFalse(err.toString().contains("Did you mean"), "no unrelated suggestion: " + err);
        assertEquals(2, run("stat"));
        assertTrue(err.toString().contains("Did you mean: rdma-bus stats?"), err.toString());
        assertEquals(2, run());
        assertTrue(err.toString().contains("missing command"), err.toString());
    }

    @Test
    void unknownTransportIsAClearErrorNotAStackTrace() {
        assertEquals(2, run("ping", "-t", "carrier-pigeon", "-n", "10"));
        assertTrue(err.toString().contains("Unknown transport 'carrier-pigeon'"), err.toString());
        assertFalse(err.toString().contains("\tat "), "no stack trace: " + err);
    }

    @Test
    void pingOnAeronIpcReportsPercentiles() {
        assertEquals(0, run("ping", "-t", "aeron-ipc", "-n", "300", "--warmup", "50", "--timeout-s", "60"), out + " / " + err);
        final Matcher m = Pattern.compile("([\\d,]+) round trips of 64 bytes: rtt p50 \\S+ p90 \\S+ p99 \\S+").matcher(out.toString());
        assertTrue(m.find(), out.toString());
        assertEquals("300", m.group(1));
        assertTrue(out.toString().contains("transport: aeron-ipc"), out.toString());
        assertTrue(out.toString().contains("INVOKER threading, backoff idle, in-place subscribers"), out.toString()); // ping's default
    }

    @Test
    void pingWithCopyingSubscribersOnDedicatedThreadsOverTcp() {
        assertEquals(0, run("ping", "-t", "tcp", "--subscriber", "copy", "--threading", "dedicated", "-n", "200", "--warmup", "20",
            "--timeout-s", "60"), out + " / " + err);
        assertTrue(out.toString().contains("DEDICATED threading, backoff idle, copy subscribers"), out.toString());
        assertTrue(out.toString().contains("200 round trips of 64 bytes"), out.toString());
    }

    @Test
    void pingRefusesAnUnknownSubscriberOrThreadingMode() {
        assertEquals(2, run("ping", "--subscriber", "lease"));
        assertTrue(err.toString().contains("--subscriber must be in-place or copy, not 'lease'"), err.toString());
        assertEquals(2, run("ping", "--threading", "fibers"));
        assertTrue(err.toString().contains("--threading must be shared, dedicated or invoker, not 'fibers'"), err.toString());
    }

    @Test
    void pingOnSharedBuses() {
        assertEquals(0, run("ping", "-t", "aeron-ipc", "--threading", "shared", "-n", "300", "--warmup", "50", "--timeout-s", "60"),
            out + " / " + err);
        assertTrue(out.toString().contains("SHARED threading, backoff idle, in-place subscribers"), out.toString());
        assertTrue(out.toString().contains("300 round trips of 64 bytes"), out.toString());
    }

    @Test
    void aCommandThatRunsNoBusLoopRefusesInvokerFromTheFlagOrFromOutsideCode() {
        assertEquals(2, run("throughput", "-t", "aeron-ipc", "--threading", "invoker"));
        assertTrue(err.toString().contains("--threading invoker needs a loop that calls Bus.doWork(), which only ping runs"), err.toString());
        System.setProperty("rdmabus.threading-mode", "invoker");
        try {
            assertEquals(2, run("sub", "-t", "tcp", "-p", "tcp.bind=127.0.0.1:0", "--topic", "cli.invoker", "-n", "1", "-d", "5"));
        } finally {
            System.clearProperty("rdmabus.threading-mode");
        }
        assertTrue(err.toString().contains("rdmabus.threading-mode=invoker (from sysprop:rdmabus.threading-mode) needs a loop that calls "
            + "Bus.doWork(), which only ping runs"), err.toString());
    }

    @Test
    void theInProcessBusesOfPingAndThroughputTakeTheirSettingsFromOutsideCode() {
        System.setProperty("rdmabus.transport", "aeron-ipc");
        System.setProperty("rdmabus.idle-strategy", "yielding");
        try {
            assertEquals(0, run("ping", "-n", "100", "--warmup", "10", "--timeout-s", "60"), out + " / " + err);
            assertTrue(out.toString().contains("transport: aeron-ipc (2 buses in this process, one media driver), INVOKER threading, yielding idle"),
                out.toString());
            System.setProperty("rdmabus.threading-mode", "invoker");
            assertEquals(2, run("throughput", "--duration-s", "1"));
        } finally {
            System.clearProperty("rdmabus.transport");
            System.clearProperty("rdmabus.idle-strategy");
            System.clearProperty("rdmabus.threading-mode");
        }
        assertTrue(err.toString().contains("rdmabus.threading-mode=invoker (from sysprop:rdmabus.threading-mode) needs a loop that calls "
            + "Bus.doWork(), which only ping runs"), err.toString());
    }

    @Test
    void throughputOnAeronIpcMovesEveryMessage() {
        assertEquals(0, run("throughput", "-t", "aeron-ipc", "--sizes", "64,1024", "--duration-s", "1"), out + " / " + err);
        assertEveryMessageReceivedForBothSizes();
    }

    @Test
    void throughputWithBatchOffersMovesEveryMessage() {
        assertEquals(2, run("throughput", "--batch", "0"));
        assertTrue(err.toString().contains("--batch >= 1"), err.toString());
        out.getBuffer().setLength(0);
        assertEquals(0, run("throughput", "-t", "aeron-ipc", "--sizes", "64,1024", "--duration-s", "1", "--batch", "16"), out + " / " + err);
        assertTrue(out.toString().contains(", batch offers of 16"), out.toString());
        assertEveryMessageReceivedForBothSizes();
    }

    private void assertEveryMessageReceivedForBothSizes() {
        final Matcher m = Pattern.compile("size +(\\d+) B: +([\\d,]+) msgs .* \\(sent ([\\d,]+), lost 0\\)").matcher(out.toString());
        int sizes = 0;
        while (m.find()) {
            sizes++;
            assertEquals(m.group(3), m.group(2), "reliable: everything sent was received");
            assertTrue(Long.parseLong(m.group(2).replace(",", "")) > 0, out.toString());
        }
        assertEquals(2, sizes, out.toString());
    }

    @Test
    void pubReachesSubAcrossTwoBusesOverTcp() throws Exception {
        final int port = io.rdmabus.samples.support.LocalBuses.freeTcpPort();
        final StringWriter subOut = new StringWriter();
        final CommandLine sub = CliSupport.commandLine(new RdmaBusCli());
        sub.setOut(new PrintWriter(subOut, true));
        sub.setErr(new PrintWriter(subOut, true));
        final java.util.concurrent.CompletableFuture<Integer> subExit = java.util.concurrent.CompletableFuture.supplyAsync(() ->
            sub.execute("sub", "-t", "tcp", "-p", "tcp.bind=127.0.0.1:" + port, "--topic", "cli.test", "-n", "3", "-d", "60"));
        // the subscriber listens first; the publisher dials it
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!subOut.toString().contains("subscribed to cli.test") && System.nanoTime() < deadlineNs) {
            Thread.sleep(20);
        }
        assertEquals(0, run("pub", "-t", "tcp", "--seed", "tcp=127.0.0.1:" + port, "--topic", "cli.test", "--wait-s", "30",
            "one", "zwei ✓", "three"), out + " / " + err);
        assertTrue(out.toString().contains("published 3 message(s) to cli.test"), out.toString());
        assertEquals(0, subExit.get(60, TimeUnit.SECONDS), subOut.toString());
        final String received = subOut.toString();
        assertTrue(received.contains("] one") && received.contains("] zwei ✓") && received.contains("] three"), received);
        assertTrue(received.contains("received 3 message(s)"), received);
    }

    @Test
    void devicesNeverThrows() {
        assertEquals(0, run("devices"), err.toString());
        assertTrue(out.toString().contains("no RDMA device: the bus will use ") || out.toString().contains("RDMA devices: "), out.toString());
        assertTrue(out.toString().contains("aeron-ipc"), out.toString());
    }

    @Test
    void statsWithNoBusSaysWhereItLooked(@TempDir final Path dir) {
        assertEquals(1, run("stats", "--dir", dir.toString()));
        assertEquals("no bus on this host (looked in [" + dir + "])", err.toString().strip());
        assertEquals(1, run("errors", "--dir", dir.toString(), "nobody"));
        assertTrue(err.toString().contains("no bus named 'nobody' on this host"), err.toString());
        assertEquals(2, run("stats", "-d", "0", "--dir", dir.toString()));
        assertTrue(err.toString().contains("--duration-s must be at least 1, got 0"), err.toString());
    }

    @Test
    void errorsPrintsTheDistinctErrorLog(@TempDir final Path dir) {
        try (BusCounters counters = BusCounters.create(dir, "errs", "tcp")) {
            final TransportException peer = new TransportException("peer 10.0.0.2 sent garbage");
            counters.recordError(peer);
            counters.recordError(peer);
            assertEquals(0, run("errors", "--dir", dir.toString(), "errs"), err.toString());
        }
        final String text = out.toString();
        assertTrue(text.startsWith("bus errs (pid " + ProcessHandle.current().pid() + ", tcp), " + dir), text);
        assertTrue(text.contains("2 observation(s), first "), text);
        assertTrue(text.contains("io.rdmabus.TransportException: peer 10.0.0.2 sent garbage"), text);
        assertTrue(text.contains("\tat io.rdmabus.samples.cli.RdmaBusCliTest.errorsPrintsTheDistinctErrorLog"), text);
        assertTrue(text.strip().endsWith("1 distinct error(s)"), text);
    }
}
