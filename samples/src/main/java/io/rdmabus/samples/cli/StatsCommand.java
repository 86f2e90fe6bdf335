package io.rdmabus.samples.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.counters.CountersFile;
import io.rdmabus.counters.CountersFileReader;
import io.rdmabus.counters.CountersFileReader.Counter;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code rdma-bus stats [NAME]}: the live counters of the buses running on this host, read from their counters files
 * (like AeronStat), so it works from any process and any user who may read the files. Refreshes every second with the
 * rate of each counter since the previous refresh; {@code -d N} stops after N refreshes and prints a summary of the
 * run; a file whose process is gone or whose heartbeat stopped is shown as stale.
 */
@Command(name = "stats", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Live counters of the buses on this host (all, or the one named), from their counters files; refreshed every second.")
final class StatsCommand implements Callable<Integer> {
    /** Counters that are levels, not running totals: no rate, no change in the summary. */
    private static final Set<String> GAUGES = Set.of("subscriptions", "publications", "ringCapacity", "ringFree", "discoveredPeers",
        "credits", "outstandingSends", "queuedBytes", "imagesConnected");

    @Parameters(arity = "0..1", paramLabel = "NAME", description = "the bus's name (default: every bus)")
    String busName;
    @Option(names = {"-d", "--duration-s", "--duration"}, paramLabel = "N",
        description = "refresh N times, once a second, then print a summary (default: until Ctrl-C)")
    Integer durationS;
    @Option(names = "--once", description = "print the counters once and exit")
    boolean once;
    @Mixin
    BusFiles files;
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final Map<Path, Map<String, Long>> previous = new HashMap<>();
    private final Map<Path, Map<String, Long>> first = new LinkedHashMap<>();
    private final Map<Path, String> titles = new LinkedHashMap<>();

    StatsCommand() {
    }

    @Override
    public Integer call() {
        final PrintWriter out = spec.commandLine().getOut();
        if (durationS != null && durationS < 1) {
            throw new IllegalArgumentException("--duration-s must be at least 1, got " + durationS);
        }
        if (!print(out, 0, 0)) {
            spec.commandLine().getErr().println(files.notFound(busName));
            return CliSupport.EXIT_FAILED;
        }
        if (once) {
            return 0;
        }
        final long startNs = System.nanoTime();
        long previousNs = startNs;
        for (int tick = 1; durationS == null || tick <= durationS; tick++) {
            final long dueNs = startNs + TimeUnit.SECONDS.toNanos(tick);
            long nowNs;
            while ((nowNs = System.nanoTime()) < dueNs) {
                LockSupport.parkNanos(dueNs - nowNs);
                if (Thread.interrupted()) {
                    return 0;
                }
            }
            print(out, tick, (nowNs - previousNs) / 1e9);
            previousNs = nowNs;
        }
        summary(out, (previousNs - startNs) / 1e9);
        return 0;
    }

    /** @return false if no bus was found */
    private boolean print(final PrintWriter out, final int tick, final double seconds) {
        final Map<Path, CountersFileReader> readers = files.open(busName);
        final long nowMs = System.currentTimeMillis();
        if (tick > 0) {
            out.printf("--- %ds%n", tick);
        }
        for (final Path gone : new ArrayList<>(previous.keySet())) {
            if (!readers.containsKey(gone)) {
                out.println(titles.get(gone) + ": closed (its file is gone)");
                previous.remove(gone);
            }
        }
        for (final Map.Entry<Path, CountersFileReader> e : readers.entrySet()) {
            try (CountersFileReader reader = e.getValue()) {
                final Path file = e.getKey();
                final String title = "bus " + reader.busName() + " (pid " + reader.pid() + ", " + reader.transportName() + ")";
                titles.put(file, title);
                final String stale = reader.staleReason(nowMs);
                if (stale != null) {
                    out.printf("%s: STALE, %s; last heartbeat %s; file %s%n", title, stale,
                        java.time.Instant.ofEpochMilli(reader.heartbeatMs()), file);
                    continue;
                }
                out.printf("%s up %ds, %s%n", title, (nowMs - reader.startTimeMs()) / 1000, file);
                final Map<String, Long> before = previous.get(file);
                final Map<String, Long> now = new LinkedHashMap<>();
                int zeroTransport = 0;
                for (final Counter c : reader.counters()) {
                    final String key = c.scope() + "\u0000" + c.name() + "\u0000" + c.scopeId();
                    now.put(key, c.value());
                    if (c.kind() == CountersFile.KIND_TRANSPORT && c.value() == 0) {
                        zeroTransport++;
                        continue;
                    }
                    final Long old = before == null ? null : before.get(key);
                    final String rate = old == null || GAUGES.contains(c.name()) || seconds <= 0 ? ""
                        : String.format("%,14.0f/s", (c.value() - old) / seconds);
                    out.printf("  %-40s %-22s %,18d %s%n", c.scope(), c.name(), c.value(), rate);
                }
                if (zeroTransport > 0) {
                    out.printf("  %-40s (%d more counters, all 0)%n", "transport", zeroTransport);
                }
                previous.put(file, now);
                first.putIfAbsent(file, now);
            }
        }
        out.flush();
        return !readers.isEmpty();
    }

    private void summary(final PrintWriter out, final double seconds) {
        out.printf("=== summary over %.1f s%n", seconds);
        for (final Map.Entry<Path, Map<String, Long>> e : first.entrySet()) {
            final Map<String, Long> last = previous.get(e.getKey());
            out.println(titles.get(e.getKey()) + (last == null ? ": closed during the run" : ""));
            if (last == null) {
                continue;
            }
            int unchanged = 0;
            for (final Map.Entry<String, Long> c : last.entrySet()) {
                final String[] parts = c.getKey().split("\u0000");
                final Long start = e.getValue().get(c.getKey());
                final long delta = c.getValue() - (start == null ? 0 : start);
                if (GAUGES.contains(parts[1]) || delta == 0) {
                    unchanged++;
                    continue;
                }
                out.printf("  %-40s %-22s %,18d  %+,d (%,.0f/s)%n", parts[0], parts[1], c.getValue(), delta, delta / seconds);
            }
            out.printf("  (%d counters unchanged or levels)%n", unchanged);
        }
        out.flush();
    }

}
