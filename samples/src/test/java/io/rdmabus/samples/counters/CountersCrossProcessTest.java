package io.rdmabus.samples.counters;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.rdmabus.counters.CountersFile;
import io.rdmabus.counters.CountersFileReader;
import io.rdmabus.samples.cli.CliSupport;
import io.rdmabus.samples.cli.RdmaBusCli;

import picocli.CommandLine;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The counters file read from another process: the buses run in a child JVM ({@link CountersChild}) on real transports,
 * this JVM reads their files with {@link CountersFileReader} and the {@code rdma-bus stats} command.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // reads of the child block uninterruptibly
class CountersCrossProcessTest {
    private static final int MESSAGES = 5_000;

    @TempDir
    Path dir;
    private Process child;
    private BufferedReader childOut;
    private final List<String> childLines = new ArrayList<>();

    @AfterEach
    void stopChild() throws InterruptedException {
        if (child != null && child.isAlive()) {
            child.destroyForcibly();
            child.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** Starts the child and reads its output up to READY. @return the STATS lines: "bus scope|name" to value */
    private Map<String, Long> startChild(final String transport) throws IOException {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (final String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (arg.startsWith("--add-") || arg.startsWith("--enable-native-access") || arg.startsWith("--sun-misc")) {
                command.add(arg);
            }
        }
        command.addAll(List.of("-D" + io.rdmabus.counters.BusCounters.DIR_PROPERTY + "=" + dir, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-cp", System.getProperty("java.class.path"), CountersChild.class.getName(), transport, Integer.toString(MESSAGES)));
        child = new ProcessBuilder(command).redirectErrorStream(true).start();
        childOut = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        final Map<String, Long> stats = new LinkedHashMap<>();
        String line;
        while ((line = childOut.readLine()) != null && !line.equals("READY")) {
            childLines.add(line);
            if (line.startsWith("STATS ")) {
                final int eq = line.lastIndexOf('=');
                stats.put(line.substring("STATS ".length(), eq), Long.parseLong(line.substring(eq + 1)));
            }
        }
        assertNotNull(line, "the child ended before READY: " + String.join("\n", childLines));
        return stats;
    }

    /** @return the counters of the child's bus {@code busName} as "bus scope|name" to value, read from its file */
    private Map<String, Long> readFile(final String busName) throws IOException {
        final Map<String, Long> values = new LinkedHashMap<>();
        for (final Path file : CountersFile.list(List.of(dir))) {
            try (CountersFileReader reader = CountersFileReader.open(file)) {
                if (!reader.busName().equals(busName)) {
                    continue;
                }
                assertEquals(child.pid(), reader.pid(), "pid in " + file);
                assertNull(reader.staleReason(System.currentTimeMillis()), file + " is live");
                for (final CountersFileReader.Counter c : reader.counters()) {
                    values.put(busName + " " + c.scope() + "|" + c.name(), c.value());
                }
            }
        }
        return values;
    }

    /** @return the counters of kind {@code kind} in the file of bus {@code busName} */
    private List<CountersFileReader.Counter> kinds(final String busName, final int kind) throws IOException {
        final List<CountersFileReader.Counter> out = new ArrayList<>();
        for (final Path file : CountersFile.list(List.of(dir))) {
            try (CountersFileReader reader = CountersFileReader.open(file)) {
                if (reader.busName().equals(busName)) {
                    reader.counters().stream().filter(c -> c.kind() == kind).forEach(out::add);
                }
            }
        }
        return out;
    }

    /** What the child's stats() say of the in-place subscription, the transport's connections and counters (the files equal them). */
    private void checkConnectionsAndTransport(final String transport, final Map<String, Long> stats) throws IOException {
        final String reliable = "child-sub subscription " + CountersChild.RELIABLE.name();
        assertEquals(MESSAGES, stats.get(reliable + " (in place)|messagesDelivered"), "the in-place subscription: " + stats);
        assertEquals(0L, stats.get(reliable + " (in place)|ringCapacity"), "an in-place subscription has no ring");
        final long framesTaken = stats.get(reliable + "|framesReceived") + stats.get(reliable + " (in place)|framesReceived")
            + stats.get("child-sub subscription " + CountersChild.BEST_EFFORT.name() + "|framesReceived");
        if (transport.equals("tcp")) {
            // every data message from the publisher's node is offered to each local subscription of its topic
            final long in = sum(stats, "child-sub connection ", "|messagesIn");
            assertEquals(stats.get(reliable + "|framesReceived") + stats.get("child-sub subscription " + CountersChild.BEST_EFFORT.name()
                + "|framesReceived"), in, "child-sub's connections' messagesIn: " + stats);
            assertEquals(in, sum(stats, "child-pub connection ", "|messagesOut"), "what one side wrote, the other read: " + stats);
            assertTrue(sum(stats, "child-sub connection ", "|bytesIn") > in * 9, "frame bytes in: " + stats);
            assertEquals(0, sum(stats, "child-pub connection ", "|reconnects"), "first connections: " + stats);
            assertEquals(1, kinds("child-pub", CountersFile.KIND_CONNECTION).stream().map(CountersFileReader.Counter::scopeId).distinct().count(),
                "one connection in child-pub's file");
        } else {
            assertEquals(framesTaken, stats.get("child-sub transport|framesReceived"), "Aeron frames taken by the three subscriptions' sinks");
            assertTrue(stats.get("child-pub transport|framesSent") >= MESSAGES, "Aeron frames sent: " + stats);
            assertEquals(3L, stats.get("child-sub transport|imagesConnected"), "one image per subscription: " + stats);
            assertTrue(stats.get("child-sub transport|imagesAvailable") >= 3, "images available: " + stats);
            assertEquals(List.of(), kinds("child-sub", CountersFile.KIND_CONNECTION), "Aeron has no connections of its own");
        }
    }

    private static long sum(final Map<String, Long> stats, final String prefix, final String suffix) {
        return stats.entrySet().stream().filter(e -> e.getKey().startsWith(prefix) && e.getKey().endsWith(suffix)).mapToLong(Map.Entry::getValue)
            .sum();
    }

    private static Map<String, Long> only(final Map<String, Long> expected, final Map<String, Long> actual) {
        final Map<String, Long> out = new LinkedHashMap<>();
        expected.keySet().forEach(k -> out.put(k, actual.get(k)));
        return out;
    }

    private String runCli(final String... args) {
        final StringWriter out = new StringWriter();
        final CommandLine cli = CliSupport.commandLine(new RdmaBusCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(out, true));
        final int exit = cli.execute(args);
        assertEquals(0, exit, "exit of rdma-bus " + String.join(" ", args) + ": " + out);
        return out.toString();
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "aeron-ipc"})
    void anotherProcessReadsTheCountersOfARunningBusAndTheyMatchItsStats(final String transport) throws Exception {
        final Map<String, Long> stats = startChild(transport);
        assertEquals(MESSAGES, stats.get("child-sub subscription counters.reliable|messagesDelivered"), childLines.toString());
        final Map<String, Long> expectedSub = new LinkedHashMap<>();
        final Map<String, Long> expectedPub = new LinkedHashMap<>();
        stats.forEach((k, v) -> (k.startsWith("child-sub ") ? expectedSub : expectedPub).put(k, v));
        // the bus copies its counters into the file every 100 ms: wait for the copy after the traffic stopped
        await("child-sub's counters file to show its stats()").atMost(Duration.ofSeconds(10))
            .untilAsserted(() -> assertEquals(expectedSub, only(expectedSub, readFile("child-sub"))));
        await("child-pub's counters file to show its stats()").atMost(Duration.ofSeconds(10))
            .untilAsserted(() -> assertEquals(expectedPub, only(expectedPub, readFile("child-pub"))));
        final Map<String, Long> pubFile = readFile("child-pub");
        final long reliablePublished = pubFile.entrySet().stream()
            .filter(e -> e.getKey().startsWith("child-pub publication " + CountersChild.RELIABLE.name() + " session ")
                && e.getKey().endsWith("|messagesPublished"))
            .mapToLong(Map.Entry::getValue).sum();
        assertEquals(MESSAGES, reliablePublished, "the reliable publication's messagesPublished in " + pubFile);
        assertTrue(readFile("child-sub").get("child-sub subscription counters.reliable|bytesReceived") >= MESSAGES * 9L,
            "payload bytes of 5000 'message N' strings");

        checkConnectionsAndTransport(transport, stats);

        final String once = runCli("stats", "--once", "--dir", dir.toString(), "child-sub");
        assertTrue(once.contains("bus child-sub (pid " + child.pid() + ", " + transport + ")"), once);
        assertTrue(once.matches("(?s).*subscription counters.reliable +messagesDelivered +5,000.*"), once);
        final String watched = runCli("stats", "-d", "2", "--dir", dir.toString());
        assertTrue(watched.contains("--- 1s") && watched.contains("--- 2s") && !watched.contains("--- 3s"), watched);
        assertTrue(watched.contains("=== summary over 2.0 s"), watched);

        if (transport.equals("tcp")) {
            assertTrue(once.matches("(?s).*connection \\S+ \\(child-pub\\) +messagesIn +[0-9,]+.*"), once);
        }

        final List<Path> files = CountersFile.list(List.of(dir));
        assertEquals(2, files.size(), files.toString());
        child.getOutputStream().write("close-sub\n".getBytes(StandardCharsets.UTF_8));
        child.getOutputStream().flush();
        String line;
        while ((line = childOut.readLine()) != null && !line.equals("SUB-CLOSED")) {
            assertFalse(line.contains("|messagesIn="), "child-pub's stats() still lists a connection after child-sub closed: " + line);
        }
        assertEquals("SUB-CLOSED", line);
        await("child-pub's file to free the closed connection's counters").atMost(Duration.ofSeconds(10))
            .untilAsserted(() -> assertEquals(List.of(), kinds("child-pub", CountersFile.KIND_CONNECTION)));
        child.getOutputStream().write("close\n".getBytes(StandardCharsets.UTF_8));
        child.getOutputStream().flush();
        assertEquals("CLOSED", childOut.readLine());
        assertTrue(child.waitFor(30, TimeUnit.SECONDS), "child exits after closing its buses");
        for (final Path file : files) {
            assertFalse(Files.exists(file), file + " still exists after its bus closed");
        }
    }

    @Test
    void theFileOfAStoppedProcessIsReportedStaleOnceItsHeartbeatIsOld() throws Exception {
        startChild("aeron-ipc");
        final String pid = Long.toString(child.pid());
        assertEquals(0, new ProcessBuilder("kill", "-STOP", pid).inheritIO().start().waitFor(), "kill -STOP " + pid);
        try {
            final Path file = CountersFile.list(List.of(dir)).get(0);
            await("the heartbeat of a stopped process to get older than " + CountersFile.STALE_AFTER_MS + " ms")
                .atMost(Duration.ofMillis(CountersFile.STALE_AFTER_MS * 3)).untilAsserted(() -> {
                    try (CountersFileReader reader = CountersFileReader.open(file)) {
                        final String stale = reader.staleReason(System.currentTimeMillis());
                        assertTrue(stale != null && stale.startsWith("no heartbeat for ") && stale.endsWith(" s (process " + pid + ")"),
                            "stale reason: " + stale);
                    }
                });
        } finally {
            new ProcessBuilder("kill", "-CONT", pid).inheritIO().start().waitFor();
        }
    }

    @Test
    void theFileOfAKilledProcessIsReportedStale() throws Exception {
        startChild("tcp");
        final long pid = child.pid();
        child.destroyForcibly(); // SIGKILL: the buses get no chance to delete their files
        assertTrue(child.waitFor(30, TimeUnit.SECONDS));
        final List<Path> files = CountersFile.list(List.of(dir));
        assertEquals(2, files.size(), "both buses' files outlive the killed process: " + files);
        for (final Path file : files) {
            try (CountersFileReader reader = CountersFileReader.open(file)) {
                assertEquals("process " + pid + " is not running", reader.staleReason(System.currentTimeMillis()));
            }
        }
        final String out = runCli("stats", "--once", "--dir", dir.toString(), "child-sub");
        assertTrue(out.contains("bus child-sub (pid " + pid + ", tcp): STALE, process " + pid + " is not running"), out);
    }
}
