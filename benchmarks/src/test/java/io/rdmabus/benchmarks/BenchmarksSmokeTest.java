package io.rdmabus.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import picocli.CommandLine;

/**
 * Fast smoke runs of every harness with a few hundred messages: they must complete and move every message. No
 * timing is asserted (this machine is shared; the real runs are in docs/benchmarks.md).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BenchmarksSmokeTest {
    @Test
    void hotPathBenchmarkStateDeliversEveryMessage() throws InterruptedException {
        for (final String transport : new String[] {"direct", "aeron-ipc"}) {
            for (final String subscriber : new String[] {"copy", "in-place"}) {
                final HotPathBenchmark bench = new HotPathBenchmark();
                bench.transport = transport;
                bench.sizeBytes = 64;
                bench.subscriber = subscriber;
                bench.threading = "SHARED";
                bench.idle = "backoff";
                bench.setUp();
                for (int i = 0; i < 500; i++) {
                    assertEquals(0, bench.publishAndDeliver());
                }
                for (int i = 0; i < 50; i++) {
                    assertTrue(bench.publishBatchAndDeliver() > 0, "the batch's last offer took something");
                }
                bench.tearDown(); // throws if a reliable message was lost
            }
        }
    }

    @Test
    void compareHarnessRunsEverySectionAndDrawsThePlot(@TempDir final Path dir) throws Exception {
        final File png = dir.resolve("latency.png").toFile();
        final CompareHarness harness = new CompareHarness();
        final int exit = new CommandLine(harness).execute("--messages", "300", "--rounds", "1", "--pings", "50", "--fanout", "1,2",
            "--sections", "aeron,tcp,fanout", "--plot", png.getPath());
        assertEquals(0, exit);
        assertTrue(harness.rows().stream().anyMatch(r -> r.startsWith("| 64 B |")), harness.rows().toString());
        assertTrue(harness.rows().stream().anyMatch(r -> r.startsWith("| 1024 B |")), harness.rows().toString());
        assertTrue(harness.rows().stream().anyMatch(r -> r.startsWith("| 2 |")), "fan-out with 2 subscribers: " + harness.rows());
        assertTrue(harness.latencies().containsKey("bus/aeron-ipc shared"), harness.latencies().keySet().toString());
        assertTrue(harness.latencies().containsKey("raw/aeron-ipc copy pong-poller"), "SHARED: a raw thread of its own receives the pongs, "
            + harness.latencies().keySet());
        assertTrue(harness.latencies().containsKey("bus/tcp shared"), "the bus over TCP ran: " + harness.rows());
        assertTrue(harness.latencies().containsKey("raw/reactor-netty-tcp copy"), harness.latencies().keySet().toString());
        harness.latencies().values().forEach(h -> assertEquals(50, h.getTotalCount()));
        assertTrue(ImageIO.read(png).getWidth() > 0, "a readable PNG");
    }

    @Test
    void compareHarnessDrivesInvokerBusesAndReadsInPlaceOnBothSides() {
        final CompareHarness harness = new CompareHarness();
        final int exit = new CommandLine(harness).execute("--messages", "300", "--rounds", "1", "--pings", "50", "--sizes", "64",
            "--sections", "aeron,tcp", "--threading", "INVOKER", "--subscriber", "in-place", "--batch", "7", "--raw-timestamps", "true",
            "--plot", "");
        assertEquals(0, exit); // every one-way run moved its 300 messages (7 per offer, 6 in the last), else it would time out
        assertEquals(java.util.Set.of("bus/aeron-ipc invoker in-place", "raw/aeron-ipc stamped", "bus/tcp invoker in-place",
            "raw/reactor-netty-tcp stamped"), harness.latencies().keySet());
        harness.latencies().values().forEach(h -> assertEquals(50, h.getTotalCount()));
    }

    @Test
    void handOffProbeMovesMessagesAndRefusesABadRing() {
        final HandOffProbe probe = new HandOffProbe();
        assertEquals(0, new CommandLine(probe).execute("--seconds", "1"));
        assertEquals(1, probe.perSecond().length);
        assertTrue(probe.perSecond()[0] > 0, "no message moved in a second");
        assertEquals(2, io.rdmabus.samples.cli.CliSupport.commandLine(new HandOffProbe()).execute("--ring", "1000"));
    }

    @Test
    void parkCostProbeParksAndRefusesANonPositivePark() {
        final ParkCostProbe probe = new ParkCostProbe();
        assertEquals(0, new CommandLine(probe).execute("--seconds", "1", "--park-us", "1000", "--counters", "1"));
        assertEquals(1, probe.parksPerSecond().length);
        assertTrue(probe.parksPerSecond()[0] > 0, "the parking thread never came back from a park");
        assertEquals(2, io.rdmabus.samples.cli.CliSupport.commandLine(new ParkCostProbe()).execute("--park-us", "0"));
    }

    @Test
    void badFlagsAreAUsageError() {
        assertEquals(2, io.rdmabus.samples.cli.CliSupport.commandLine(new CompareHarness()).execute("--sections", "carrier-pigeon"));
        assertEquals(2, io.rdmabus.samples.cli.CliSupport.commandLine(new CompareHarness()).execute("--messages", "x"));
        assertEquals(2, io.rdmabus.samples.cli.CliSupport.commandLine(new CompareHarness()).execute("--raw-subscriber", "zero-copy"));
        assertEquals(2, io.rdmabus.samples.cli.CliSupport.commandLine(new CompareHarness()).execute("--raw-threading", "INVOKER"));
        assertEquals(2, io.rdmabus.samples.cli.CliSupport.commandLine(new CompareHarness()).execute("--raw-timestamps", "true", "--sizes", "8"));
    }
}
