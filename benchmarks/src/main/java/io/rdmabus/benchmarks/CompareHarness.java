package io.rdmabus.benchmarks;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

import io.rdmabus.samples.cli.CliSupport;

import io.rdmabus.ThreadingMode;

import org.HdrHistogram.Histogram;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Side-by-side runs that print ratios directly: the bus over Aeron IPC vs raw Aeron IPC (same driver settings), the
 * bus over TCP vs raw reactor-netty TCP, and the publisher's cost per message with 1..8 subscribers. Contenders run
 * alternately, round by round, in one JVM, so machine noise hits both, and take turns at going first; each size
 * starts with untimed warm-up rounds (the JIT compiles both contenders' paths, the heap's young generation is
 * touched once), so the timed rounds compare steady states; medians are reported. Also renders the
 * round-trip percentile plot (PNG). Prints Markdown tables. Never asserts on timing.
 */
@Command(name = "compare", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Bus vs raw Aeron, bus vs raw reactor-netty TCP, fan-out cost; ratios and a latency plot.")
public final class CompareHarness implements Callable<Integer> {
    @Option(names = "--messages", defaultValue = "200000", description = "messages per one-way run (default: ${DEFAULT-VALUE})")
    int messages;
    @Option(names = "--rounds", defaultValue = "3", description = "alternating rounds per size; the median is reported (default: ${DEFAULT-VALUE})")
    int rounds;
    @Option(names = "--warmup-rounds", defaultValue = "1",
        description = "untimed rounds per size before the timed ones, each contender (default: ${DEFAULT-VALUE})")
    int warmupRounds;
    @Option(names = "--pings", defaultValue = "5000", description = "round trips per latency run (default: ${DEFAULT-VALUE})")
    int pings;
    @Option(names = "--sizes", split = ",", defaultValue = "64,1024", description = "payload sizes (default: ${DEFAULT-VALUE})")
    List<Integer> sizes;
    @Option(names = "--sections", split = ",", defaultValue = "aeron,tcp,fanout", description = "which comparisons (default: ${DEFAULT-VALUE})")
    List<String> sections;
    @Option(names = "--fanout", split = ",", defaultValue = "1,2,4,8", description = "subscriber counts (default: ${DEFAULT-VALUE})")
    List<Integer> fanOut;
    @Option(names = "--fanout-transport", defaultValue = "aeron-ipc",
        description = "the fan-out section's transport: aeron-ipc (one shared log) or tcp (one connection per subscriber bus) (default: ${DEFAULT-VALUE})")
    String fanOutTransport;
    @Option(names = "--threading", defaultValue = "SHARED",
        description = "the buses' threading mode: DEDICATED, SHARED or INVOKER (the publishing thread drives the publisher's bus, "
            + "a thread of the harness the subscriber's) (default: ${DEFAULT-VALUE})")
    ThreadingMode threading;
    @Option(names = "--subscriber", defaultValue = "copy",
        description = "copy (Bus.subscribe, a Flux of byte[]) or in-place (Bus.subscribeInPlace, zero-copy) (default: ${DEFAULT-VALUE})")
    String subscriber;
    @Option(names = "--raw-subscriber", defaultValue = "as-bus",
        description = "what the raw contender's receiving code does with a message: as-bus (what --subscriber says), copy (into a new "
            + "byte[], as a Flux of byte[] hands it over) or in-place (reads it where it lies) (default: ${DEFAULT-VALUE})")
    String rawSubscriber;
    @Option(names = "--raw-threading", defaultValue = "as-bus",
        description = "who receives the raw Aeron contender's pongs: as-bus (a thread of its own that hands them to the pinging thread "
            + "when --threading is SHARED or DEDICATED, as the bus's agent does; the pinging thread in INVOKER), poller (always a thread "
            + "of its own) or pinger (always the pinging thread) (default: ${DEFAULT-VALUE})")
    String rawThreading;
    @Option(names = "--timestamps", defaultValue = "true", arity = "1",
        description = "the bus's topics stamp every frame with the publisher's clock: true, or false for Topic.withoutTimestamps() "
            + "(raw contenders stamp only with --raw-timestamps) (default: ${DEFAULT-VALUE})")
    boolean timestamps;
    @Option(names = "--raw-timestamps", defaultValue = "false", arity = "1",
        description = "the raw contenders write System.nanoTime() into every message (one-way: its first 8 bytes; a ping: the 8 after "
            + "its sequence), as a publisher that stamps its messages does; the bus stamps every frame unless --timestamps false "
            + "(default: ${DEFAULT-VALUE})")
    boolean rawTimestamps;
    @Option(names = "--batch", defaultValue = "1",
        description = "one-way runs: the bus offers this many messages per call (BusPublication.offer(values, offset, length), the "
            + "publication's ownership taken once per call); raw contenders send one at a time (default: ${DEFAULT-VALUE})")
    int batch;
    @Option(names = "--plot", defaultValue = "docs/benchmarks-latency.png", description = "PNG to write, '' for none (default: ${DEFAULT-VALUE})")
    String plot;

    /** What a run produced, for the smoke test. */
    private final List<String> rows = new ArrayList<>();
    private final Map<String, Histogram> latencies = new LinkedHashMap<>();

    /** For picocli. */
    public CompareHarness() {
    }

    /** @param args command line */
    public static void main(final String[] args) {
        System.exit(CliSupport.commandLine(new CompareHarness()).execute(args));
    }

    /** @return the table rows printed so far */
    List<String> rows() {
        return rows;
    }

    /** @return the latency histograms measured so far, by label */
    Map<String, Histogram> latencies() {
        return latencies;
    }

    @Override
    public Integer call() throws IOException {
        if (messages < 1 || rounds < 1 || warmupRounds < 0 || pings < 10 || sizes.isEmpty() || fanOut.isEmpty() || batch < 1) {
            throw new IllegalArgumentException("need --messages >= 1, --rounds >= 1, --warmup-rounds >= 0, --pings >= 10, --batch >= 1, "
                + "some --sizes and --fanout");
        }
        if (!List.of("copy", "in-place").contains(subscriber) || !List.of("as-bus", "copy", "in-place").contains(rawSubscriber)) {
            throw new IllegalArgumentException("--subscriber must be copy or in-place, --raw-subscriber as-bus, copy or in-place; got "
                + subscriber + ", " + rawSubscriber);
        }
        if (rawTimestamps && sizes.stream().anyMatch(size -> size < 2 * Long.BYTES)) {
            throw new IllegalArgumentException("--raw-timestamps needs every --sizes at least " + 2 * Long.BYTES + " bytes; got " + sizes);
        }
        if (!List.of("as-bus", "poller", "pinger").contains(rawThreading)) {
            throw new IllegalArgumentException("--raw-threading must be as-bus, poller or pinger; got " + rawThreading);
        }
        final boolean pongPoller = "as-bus".equals(rawThreading) ? threading != ThreadingMode.INVOKER : "poller".equals(rawThreading);
        final boolean inPlace = "in-place".equals(subscriber);
        final boolean rawCopies = "as-bus".equals(rawSubscriber) ? !inPlace : "copy".equals(rawSubscriber);
        System.out.println("# rdma-bus comparison: " + messages + " messages x " + rounds + " rounds per size (after " + warmupRounds
            + " untimed), " + pings + " round trips; "
            + Runtime.getRuntime().availableProcessors() + " CPUs; load " + loadAverage() + "; bus subscriber " + subscriber
            + (timestamps ? "" : " without timestamps") + (batch == 1 ? "" : ", bus offers in batches of " + batch)
            + ", raw subscriber " + (rawCopies ? "copy" : "in-place") + (rawTimestamps ? ", raw stamps each message" : "")
            + ", raw Aeron pongs received by " + (pongPoller ? "a poller thread" : "the pinger"));
        for (final String section : sections) {
            switch (section) {
                case "aeron" -> compare("Aeron IPC", () -> new BusLoad("aeron-ipc", threading, inPlace, timestamps, batch),
                    () -> new RawAeronLoad(rawCopies, pongPoller, rawTimestamps));
                case "tcp" -> compare("TCP", () -> new BusLoad("tcp", threading, inPlace, timestamps, batch), () -> new RawTcpLoad(rawCopies, rawTimestamps));
                case "fanout" -> fanOut();
                default -> throw new IllegalArgumentException("unknown section '" + section + "': use aeron, tcp, fanout");
            }
        }
        if (!plot.isBlank() && !latencies.isEmpty()) {
            final File file = new File(plot);
            PercentilePlot.render("rdma-bus round trip, " + sizes.get(0) + " B, one JVM, backoff idle (load " + loadAverage() + ")", latencies, file);
            System.out.println("latency plot: " + file.getPath());
        }
        return 0;
    }

    private void compare(final String title, final Supplier<Load> busFactory, final Supplier<Load> rawFactory) {
        System.out.printf("%n## bus vs raw %s (load before: %s)%n", title, loadAverage());
        final Load bus;
        try {
            bus = busFactory.get();
        } catch (final RuntimeException ex) {
            final String row = "| " + title + " | bus unavailable: " + ex.getMessage() + " |";
            System.out.println(row);
            rows.add(row);
            measureRawOnly(rawFactory);
            return;
        }
        try (bus; Load raw = rawFactory.get()) {
            System.out.println("| size | bus msg/s | raw msg/s | bus/raw | bus MB/s | raw MB/s | bus/raw by round |");
            System.out.println("|---:|---:|---:|---:|---:|---:|---|");
            for (final int size : sizes) {
                final double[] busRates = new double[rounds];
                final double[] rawRates = new double[rounds];
                for (int r = 0; r < warmupRounds; r++) {
                    bus.oneWay(messages, size);
                    raw.oneWay(messages, size);
                }
                for (int r = 0; r < rounds; r++) { // alternate, so drifting machine load hits both; take turns at going first
                    if (r % 2 == 0) {
                        busRates[r] = rate(bus.oneWay(messages, size));
                        rawRates[r] = rate(raw.oneWay(messages, size));
                    } else {
                        rawRates[r] = rate(raw.oneWay(messages, size));
                        busRates[r] = rate(bus.oneWay(messages, size));
                    }
                }
                final double b = median(busRates);
                final double w = median(rawRates);
                final StringBuilder byRound = new StringBuilder();
                for (int r = 0; r < rounds; r++) { // each round's two runs are back to back: the machine's drift moves them together
                    byRound.append(r == 0 ? "" : " ").append(String.format("%.2f", busRates[r] / rawRates[r]));
                }
                final String row = String.format("| %d B | %,.0f | %,.0f | %.2f | %.1f | %.1f | %s |", size, b, w, b / w, b * size / 1e6,
                    w * size / 1e6, byRound);
                System.out.println(row);
                rows.add(row);
            }
            final int size = sizes.get(0);
            final Histogram busRtt = bus.pingPong(pings, size);
            final Histogram rawRtt = raw.pingPong(pings, size);
            latencies.put(bus.label(), busRtt);
            latencies.put(raw.label(), rawRtt);
            final String row = String.format("| RTT %d B | bus p50 %.1f us p99 %.1f us | raw p50 %.1f us p99 %.1f us | p50 bus/raw %.2f |", size,
                busRtt.getValueAtPercentile(50) / 1e3, busRtt.getValueAtPercentile(99) / 1e3, rawRtt.getValueAtPercentile(50) / 1e3,
                rawRtt.getValueAtPercentile(99) / 1e3, busRtt.getValueAtPercentile(50) / (double) rawRtt.getValueAtPercentile(50));
            System.out.println(row);
            rows.add(row);
        }
        System.out.println("(load after: " + loadAverage() + ")");
    }

    private void measureRawOnly(final Supplier<Load> rawFactory) {
        try (Load raw = rawFactory.get()) {
            for (final int size : sizes) {
                final double[] rates = new double[rounds];
                for (int r = 0; r < warmupRounds; r++) {
                    raw.oneWay(messages, size);
                }
                for (int r = 0; r < rounds; r++) {
                    rates[r] = rate(raw.oneWay(messages, size));
                }
                final String row = String.format("| %d B | raw only: %,.0f msg/s %.1f MB/s |", size, median(rates), median(rates) * size / 1e6);
                System.out.println(row);
                rows.add(row);
            }
            final Histogram rtt = raw.pingPong(pings, sizes.get(0));
            latencies.put(raw.label(), rtt);
            final String row = String.format("| RTT %d B | raw p50 %.1f us p99 %.1f us |", sizes.get(0), rtt.getValueAtPercentile(50) / 1e3,
                rtt.getValueAtPercentile(99) / 1e3);
            System.out.println(row);
            rows.add(row);
        }
    }

    private void fanOut() {
        System.out.printf("%n## fan-out over %s, %d B, reliable (load before: %s)%n", fanOutTransport, sizes.get(0), loadAverage());
        System.out.println("| subscribers | publisher CPU ns/msg | wall ns/msg (to the last subscriber) | CPU vs 1 subscriber |");
        System.out.println("|---:|---:|---:|---:|");
        double first = 0;
        for (final int n : fanOut) {
            final double[] cpu = new double[rounds];
            final double[] wall = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                final FanOut.Result result = FanOut.run(fanOutTransport, n, messages, sizes.get(0));
                cpu[r] = result.publisherCpuNsPerMessage();
                wall[r] = result.wallNsPerMessage();
            }
            final double c = median(cpu);
            first = first == 0 ? c : first;
            final String row = String.format("| %d | %.0f | %.0f | %.2f |", n, c, median(wall), c / first);
            System.out.println(row);
            rows.add(row);
        }
        System.out.println("(load after: " + loadAverage() + ")");
    }

    private double rate(final long nanos) {
        return messages / (nanos / 1e9);
    }

    private static double median(final double[] values) {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        final int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** @return the 1/5/15-minute load averages (as {@code uptime} prints them) */
    static String loadAverage() {
        try {
            final String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (final IOException | RuntimeException ex) {
            return "unknown";
        }
    }
}
