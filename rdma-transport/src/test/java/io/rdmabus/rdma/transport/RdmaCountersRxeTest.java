package io.rdmabus.rdma.transport;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.BusStats;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.counters.BusCounters;
import io.rdmabus.counters.CountersFile;
import io.rdmabus.counters.CountersFileReader;
import io.rdmabus.spi.StaticSeedDiscovery;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.Disposable;

/**
 * The counters file of buses on the rdma transport (real rxe, one guest), read from another process: a child JVM runs a
 * publisher bus and a subscriber bus over rdma RC on loopback and prints their {@code stats()} once the traffic has
 * stopped; this JVM reads their counters files and finds the same values, then the files are gone after the child
 * closes the buses. {@code keepaliveSends} moves without traffic: the file's value is at least the printed one; so does a
 * connection's {@code outstandingSends} (a keepalive in flight). Each bus lists its one RC connection with its counters, and
 * when the subscriber's bus closes, the publisher's file frees that connection's counters.
 */
@Tag("rxe")
@Timeout(value = 600, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // reads block uninterruptibly
class RdmaCountersRxeTest {
    private static final int MESSAGES = 2_000;
    /** The one rdma counter that moves while no message flows (a keepalive per idle connection and interval). */
    private static final String KEEPALIVES = "|keepaliveSends";
    /** A connection's CQ depth gauge: a keepalive in flight moves it while no message flows. */
    private static final String OUTSTANDING = "|outstandingSends";
    private static final Topic<String> TOPIC = Topic.of("counters.rdma", Codecs.utf8(), Delivery.RELIABLE);

    private Process child;

    @AfterEach
    void stopChild() throws InterruptedException {
        if (child != null && child.isAlive()) {
            child.destroyForcibly();
            child.waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void anotherProcessReadsTheCountersOfBusesOnRdmaAndTheyMatchTheirStats() throws Exception {
        final Path dir = Files.createTempDirectory("rdma-counters");
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (final String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!arg.contains("AOTCache") && !arg.contains("jdwp") && !arg.startsWith("-javaagent")) {
                command.add(arg);
            }
        }
        command.addAll(List.of("-D" + BusCounters.DIR_PROPERTY + "=" + dir, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-cp", classPath(), Child.class.getName()));
        child = new ProcessBuilder(command).redirectErrorStream(true).start();
        final BufferedReader childOut = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        final Map<String, Long> expected = new LinkedHashMap<>();
        final List<String> lines = new ArrayList<>();
        String line;
        while ((line = childOut.readLine()) != null && !line.equals("READY")) {
            lines.add(line);
            if (line.startsWith("STATS ")) {
                final int eq = line.lastIndexOf('=');
                expected.put(line.substring("STATS ".length(), eq), Long.parseLong(line.substring(eq + 1)));
            }
        }
        assertNotNull(line, "the child ended before READY: " + String.join("\n", lines));
        assertEquals(MESSAGES, expected.get("rdma-sub subscription " + TOPIC.name() + "|messagesDelivered"), lines.toString());
        assertTrue(expected.keySet().stream().anyMatch(k -> k.startsWith("rdma-pub transport|")), "the rdma transport has counters: "
            + expected.keySet());

        await("the counters files to show the child's stats()").atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            final Map<String, Long> actual = new LinkedHashMap<>();
            for (final Path file : CountersFile.list(List.of(dir))) {
                try (CountersFileReader reader = CountersFileReader.open(file)) {
                    assertEquals(child.pid(), reader.pid());
                    assertEquals("rdma", reader.transportName());
                    assertNull(reader.staleReason(System.currentTimeMillis()), file + " is live");
                    for (final CountersFileReader.Counter c : reader.counters()) {
                        actual.put(reader.busName() + " " + c.scope() + "|" + c.name(), c.value());
                    }
                }
            }
            final Map<String, Long> same = new LinkedHashMap<>();
            expected.forEach((k, v) -> same.put(k, (k.endsWith(KEEPALIVES) && actual.get(k) != null && actual.get(k) >= v)
                || (k.endsWith(OUTSTANDING) && actual.get(k) != null && actual.get(k) >= 0) ? v : actual.get(k)));
            assertEquals(expected, same, "the files' counters (keepaliveSends: at least the printed value; outstandingSends: present)");
        });
        final Map<String, Long> pubConnection = connection(expected, "rdma-pub");
        assertEquals(Long.valueOf(MESSAGES), pubConnection.get("messagesOut"), "data sends posted on the publisher's connection: " + expected);
        assertEquals(Long.valueOf(MESSAGES), pubConnection.get("dataPosts"), "one ibv_post_send per single offer: " + expected);
        assertTrue(pubConnection.get("bytesOut") >= MESSAGES * 9L, "frame bytes of 2000 'message N' strings: " + expected);
        assertEquals(0L, pubConnection.get("drops"), "RELIABLE frames are never dropped: " + expected);
        assertEquals(0L, pubConnection.get("reconnects"), "the first connection between the two nodes: " + expected);
        assertTrue(pubConnection.get("credits") > 0, "the subscriber returned its credits once idle: " + expected);
        assertEquals(0L, connection(expected, "rdma-sub").get("messagesOut"), "the subscriber posts no data: " + expected);
        assertEquals(Long.valueOf(MESSAGES), connection(expected, "rdma-sub").get("messagesIn"),
            "data messages received on the subscriber's connection: " + expected);
        assertEquals(pubConnection.get("bytesOut"), connection(expected, "rdma-sub").get("bytesIn"), "bytes in = the peer's bytes out: "
            + expected);

        final List<Path> files = CountersFile.list(List.of(dir));
        assertEquals(2, files.size(), files.toString());
        child.getOutputStream().write("close-sub\n".getBytes(StandardCharsets.UTF_8));
        child.getOutputStream().flush();
        assertEquals("SUB-CLOSED", childOut.readLine());
        final Path pubFile = files.stream().filter(f -> f.getFileName().toString().startsWith("rdma-pub-")).findFirst().orElseThrow();
        await("rdma-pub's file to free the closed connection's counters").atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            try (CountersFileReader reader = CountersFileReader.open(pubFile)) {
                assertEquals(List.of(), reader.counters().stream().filter(c -> c.kind() == CountersFile.KIND_CONNECTION).toList());
            }
        });
        child.getOutputStream().write("close\n".getBytes(StandardCharsets.UTF_8));
        child.getOutputStream().flush();
        assertEquals("CLOSED", childOut.readLine());
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child exits after closing its buses");
        for (final Path file : files) {
            assertFalse(Files.exists(file), file + " still exists after its bus closed");
        }
    }

    /** @return the counters of the one connection of {@code bus} in the child's STATS lines, by name */
    private static Map<String, Long> connection(final Map<String, Long> stats, final String bus) {
        final Map<String, Long> out = new LinkedHashMap<>();
        final String prefix = bus + " connection ";
        stats.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                out.put(k.substring(k.lastIndexOf('|') + 1), v);
            }
        });
        assertEquals(RdmaConnectionCounter.values().length, out.size(), bus + " lists one connection with all its counters: " + stats);
        return out;
    }

    /** The test class path: the JVM's, plus what the JUnit console launcher's class loader added. */
    private static String classPath() throws URISyntaxException {
        final List<String> entries = new ArrayList<>(List.of(System.getProperty("java.class.path").split(File.pathSeparator)));
        for (ClassLoader loader = RdmaCountersRxeTest.class.getClassLoader(); loader != null; loader = loader.getParent()) {
            if (loader instanceof URLClassLoader urls) {
                for (final URL url : urls.getURLs()) {
                    entries.add(Path.of(url.toURI()).toString());
                }
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    /** The bus process: prints {@code STATS <bus> <scope>|<name>=<value>} per counter, {@code READY}; {@code close} on stdin ends it. */
    public static final class Child {
        private Child() {
        }

        /** @param args none */
        public static void main(final String[] args) throws Exception {
            final RdmaTransport pubTransport = transport(19950);
            final RdmaTransport subTransport = transport(19951);
            try (Bus pub = Bus.builder().name("rdma-pub").transport(pubTransport).idleStrategy("backoff").build()) {
                // closed by the test's close-sub (or at the end): not a try resource
                final Bus sub = Bus.builder().name("rdma-sub").transport(subTransport).idleStrategy("backoff")
                    .discovery(new StaticSeedDiscovery(Map.of(RdmaTransport.NAME, List.of(pubTransport.listenEndpoint())))).build();
                final Disposable subscription = sub.subscribe(TOPIC).subscribe();
                try (BusPublication<String> publication = pub.publication(TOPIC)) {
                    final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
                    while (!publication.isConnected() && System.nanoTime() < deadlineNs) {
                        Thread.sleep(20);
                    }
                    for (int i = 0; i < MESSAGES; i++) {
                        while (publication.offer("message " + i) != PublishStatus.OK && System.nanoTime() < deadlineNs) {
                            Thread.sleep(1);
                        }
                    }
                    while (sub.stats().subscriptions().get(0).messagesDelivered() < MESSAGES && System.nanoTime() < deadlineNs) {
                        Thread.sleep(20);
                    }
                    // the traffic has stopped once two snapshots 1 s apart agree, keepalives aside (30 tries at most: the
                    // test then shows what still moved)
                    String before = "";
                    String now = describe(pub) + describe(sub);
                    for (int i = 0; i < 30 && !withoutKeepalives(now).equals(withoutKeepalives(before)); i++) {
                        Thread.sleep(1_000);
                        before = now;
                        now = describe(pub) + describe(sub);
                    }
                    System.out.print(now);
                    System.out.println("READY");
                    System.out.flush();
                    final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                    String line;
                    while ((line = in.readLine()) != null && !"close".equals(line)) {
                        if ("close-sub".equals(line)) { // its connection closes: the publisher's file frees its counters
                            subscription.dispose();
                            sub.close();
                            System.out.println("SUB-CLOSED");
                            System.out.flush();
                        }
                    }
                } finally {
                    subscription.dispose();
                    sub.close();
                }
            }
            System.out.println("CLOSED");
            System.out.flush();
        }

        private static String withoutKeepalives(final String lines) {
            return lines.replaceAll("(?m)^.*(" + java.util.regex.Pattern.quote(KEEPALIVES) + "|" + java.util.regex.Pattern.quote(OUTSTANDING)
                + ")=.*$", "");
        }

        private static RdmaTransport transport(final int cmPort) {
            final Map<String, String> props = new HashMap<>();
            props.put(RdmaTransportConfig.CM_PORT_BASE, String.valueOf(cmPort));
            props.put(RdmaTransportConfig.CM_PORT_RANGE, "1");
            props.put(AuthConfig.SECRET, "none");
            final String self = System.getenv("LAB_SELF_IP");
            if (self != null && !self.isBlank()) {
                props.put(RdmaTransportConfig.BIND, self.trim());
            }
            return new RdmaTransport(RdmaTransportConfig.parse(props));
        }

        private static String describe(final Bus bus) {
            final BusStats stats = bus.stats();
            final StringBuilder out = new StringBuilder();
            line(out, bus.name(), "bus " + bus.name(), "messagesPublished", stats.messagesPublished());
            line(out, bus.name(), "bus " + bus.name(), "droppedNotConnected", stats.droppedNotConnected());
            for (final SubscriptionStats s : stats.subscriptions()) {
                final String scope = "subscription " + s.topic();
                line(out, bus.name(), scope, "framesReceived", s.framesReceived());
                line(out, bus.name(), scope, "messagesDelivered", s.messagesDelivered());
                line(out, bus.name(), scope, "gapMessages", s.gapMessages());
                line(out, bus.name(), scope, "malformedFrames", s.malformedFrames());
                line(out, bus.name(), scope, "duplicates", s.duplicates());
                line(out, bus.name(), scope, "ringFree", s.ringFree());
            }
            stats.transportCounters().forEach((name, value) -> line(out, bus.name(), "transport", name, value));
            for (final io.rdmabus.ConnectionStats c : stats.connections()) {
                c.counters().forEach((name, value) -> line(out, bus.name(), "connection " + c.peer(), name, value));
            }
            return out.toString();
        }

        private static void line(final StringBuilder out, final String bus, final String scope, final String name, final long value) {
            out.append("STATS ").append(bus).append(' ').append(scope).append('|').append(name).append('=').append(value).append('\n');
        }
    }
}
