package io.rdmabus.soak;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.PublishStatus;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Quote;
import io.rdmabus.codecs.Trade;
import io.rdmabus.rdma.transport.RdmaTransport;
import io.rdmabus.rdma.transport.RdmaTransportFactory;
import io.rdmabus.samples.marketdata.MarketDataTopics;
import io.rdmabus.spi.StaticSeedDiscovery;

import org.HdrHistogram.Histogram;

import reactor.core.Disposable;
import reactor.util.retry.Retry;

/**
 * One JVM of the soak run, inside an rxe guest: the publisher (quotes best effort, trades reliable, at a configured
 * rate, each message carrying its sequence and checksum) or a subscriber (proves per publisher session what it got:
 * {@link StreamCheck}; latency from the publisher's timestamp). Writes a per-second CSV and a summary (rewritten every
 * few seconds, so a subscriber killed with -9 still leaves what it proved until then) into {@code --out}.
 *
 * <pre>
 * SoakNode publisher  --out DIR --bind IP --port P --rate QUOTES_PER_S (--end-epoch-s T | --end-file F) [--name N]
 *                     [--start-file F]   (a standby: publishes only once F exists) [--ready-file F] (created when its bus is up)
 * SoakNode subscriber --out DIR --bind IP --port P --seed IP:P[,IP:P..] --stop-file F (--end-epoch-s T | --end-file F) [--name N]
 *                     [--ready-file F] [--start-file F --warm-port P]   (a standby: warms up on a throwaway bus on port P,
 *                     then creates the ready file, and joins only once the start file exists; see standBy)</pre>
 * {@code --end-file}: the run's end (epoch seconds) is written there once every subscriber is connected; until then
 * the publisher publishes and the subscribers check, without an end (bounded: {@code --max-wait-s}, default 3600).
 * {@code --ready-file}: created by a subscriber when its first trade arrives (it is connected to the publisher).
 * <pre>
 *   rdma options: [--secret-file F | --secret S|none] [--ud-mode multicast|unicast|rc] [--connect-timeout-ms MS] [--resume-ms MS]
 *   (defaults: secret none, multicast, 15000, 120000)
 * </pre>
 * {@code --transport tcp} (default {@code rdma}) runs the same nodes over TCP on one host, to smoke-test the harness
 * itself without the lab.
 * Trades go at a quarter of the quote rate. Exit code 0 on a clean close, 1 if a bus thread was left or spinning.
 */
public final class SoakNode {
    private static final long SUMMARY_EVERY_MS = 5000;
    /** Peers the rdma transport refused (no or wrong bus secret), -1 on other transports. */
    private static java.util.function.LongSupplier refused = () -> -1;
    /** Subscription errors per topic, {@code epochMs:class:message} joined by '|' (guarded by the subscriber's lock). */
    private static final Map<String, String> ERRORS = new TreeMap<>();

    private SoakNode() {
    }

    /**
     * @param args see the class comment
     * @throws Exception on a setup failure (printed, exit 2)
     */
    public static void main(final String[] args) throws Exception {
        final Map<String, String> opt = new HashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            opt.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        if (args.length == 0 || !(args[0].equals("publisher") || args[0].equals("subscriber"))) {
            System.err.println("usage: SoakNode publisher|subscriber --out DIR --bind IP --port P ...");
            System.exit(2);
        }
        final Path out = Path.of(require(opt, "out"));
        Files.createDirectories(out);
        final String name = opt.getOrDefault("name", args[0]) + "-" + ProcessHandle.current().pid();
        final LongSupplier endMs = opt.containsKey("end-file")
            ? new EndFile(Path.of(opt.get("end-file")), System.currentTimeMillis() + 1000 * Long.parseLong(opt.getOrDefault("max-wait-s", "3600")))
            : fixedEnd(Long.parseLong(require(opt, "end-epoch-s")) * 1000);
        final Path startFile = opt.containsKey("start-file") ? Path.of(opt.get("start-file")) : null;
        final Path readyFile = opt.containsKey("ready-file") ? Path.of(opt.get("ready-file")) : null;
        final boolean publisher = args[0].equals("publisher");
        if (!publisher && startFile != null) {
            standBy(opt, name, startFile, readyFile, endMs);
        }
        final Bus bus = openBus(opt, name, require(opt, "port"), endMs);
        final int exit = publisher
            ? publish(bus, out, name, Integer.parseInt(opt.getOrDefault("rate", "100")), endMs, startFile, readyFile)
            : subscribe(bus, out, name, Path.of(require(opt, "stop-file")), endMs, startFile == null ? readyFile : null);
        System.exit(exit);
    }

    /** Builds the node's bus, listening on {@code port}; waits for an ACTIVE port while the run lasts. */
    private static Bus openBus(final Map<String, String> opt, final String name, final String port, final LongSupplier endMs) throws Exception {
        final String transport = opt.getOrDefault("transport", "rdma");
        final var builder = Bus.builder().name(name).transport(transport).idleStrategy("backoff")
            .discovery(new StaticSeedDiscovery(Map.of(transport, opt.containsKey("seed") ? List.of(opt.get("seed").split(",")) : List.of())));
        RdmaTransport rdma = null;
        final Map<String, String> props = new HashMap<>();
        if (transport.equals("rdma")) {
            props.put("rdma.bind", require(opt, "bind"));
            props.put("rdma.cm.port.base", port);
            props.put("rdma.cm.port.range", "1");
            props.put("rdma.ud.mode", opt.getOrDefault("ud-mode", "multicast"));
            // 3 guests under TCG: an rdma_cm step (and AUTH) often takes longer than the default 3 s, and a handshake that
            // times out every time never connects a subscriber; the RC bench uses 15 s for the same reason
            props.put("rdma.connect.timeout.ms", opt.getOrDefault("connect-timeout-ms", "15000"));
            // a cold JVM on a 1-vCPU TCG guest beside another starting JVM can keep its poller off the CPU for more than
            // the default 3 s, failing a subscription that would have been taken a moment later; same bound as connects
            props.put("rdma.command.timeout.ms", opt.getOrDefault("connect-timeout-ms", "15000"));
            // RELIABLE resume state after a lost connection: the NIC fault is 10 s down, but under TCG "up" came 22-24 s
            // after "down" and a reconnect takes several 15 s-bounded rdma_cm steps, so the default 30 s would leave
            // no margin; the retention ring (1024 frames) holds 100 s of trades at the soak's 10 trades/s
            props.put("rdma.retention.resume.ms", opt.getOrDefault("resume-ms", "120000"));
            if (opt.containsKey("secret-file")) {
                props.put("rdma.secret.file", opt.get("secret-file"));
            } else {
                props.put("rdma.secret", opt.getOrDefault("secret", "none"));
            }
            rdma = (RdmaTransport) new RdmaTransportFactory().create(props);
            builder.transport(rdma);
        } else if (transport.equals("tcp")) {
            builder.transportProperty("tcp.bind", require(opt, "bind") + ":" + port); // host smoke test of the harness
        }
        Bus built = null;
        while (built == null) {
            try {
                built = builder.build();
            } catch (final io.rdmabus.TransportException e) {
                // a JVM that comes up while this guest's NIC is down (the NIC fault, and a cold JVM takes minutes under
                // TCG) finds no ACTIVE port: wait for the link instead of dying, so the node still takes part
                if (rdma == null || !String.valueOf(e.getMessage()).startsWith("No ACTIVE RDMA port") || System.currentTimeMillis() > endMs.getAsLong()) {
                    throw e;
                }
                System.out.println("soak " + name + ": " + e.getMessage() + "; waiting for the link");
                Thread.sleep(1000);
                rdma = (RdmaTransport) new RdmaTransportFactory().create(props);
                builder.transport(rdma);
            }
        }
        System.out.println("soak " + name + ": bus up on " + opt.get("bind") + ":" + port + " at " + System.currentTimeMillis());
        final RdmaTransport rdmaTransport = rdma;
        refused = () -> rdmaTransport == null ? -1 : rdmaTransport.refusedPeers();
        return built;
    }

    /**
     * A standby subscriber ({@code --start-file}): the replacement of the subscriber JVM that the schedule kills with -9.
     * A cold JVM needs 150-240 s under TCG to start and join, so a restart begun at the kill would mostly come up after
     * the short window and its rejoin would go unproven. This JVM starts at boot instead and warms up with
     * a throwaway bus of its own (node id, port {@code --warm-port}) that joins the publisher and takes a few trades,
     * closes it, says it is ready, and waits for the start file (written right after the kill). Only then does it open
     * the bus it is checked with: a new node that joins mid-run, as a restarted JVM's would.
     */
    private static void standBy(final Map<String, String> opt, final String name, final Path startFile, final Path readyFile,
                                final LongSupplier endMs) throws Exception {
        final long warmStartMs = System.currentTimeMillis();
        final Bus warm = openBus(opt, name + "-warm", require(opt, "warm-port"), endMs);
        final java.util.concurrent.atomic.AtomicLong trades = new java.util.concurrent.atomic.AtomicLong();
        final Disposable q = warm.subscribe(MarketDataTopics.QUOTES).subscribe(m -> { }, e -> { });
        final Disposable t = warm.subscribe(MarketDataTopics.TRADES).subscribe(m -> trades.incrementAndGet(), e -> { });
        while (trades.get() < 20 && !Files.exists(startFile) && System.currentTimeMillis() < endMs.getAsLong()) {
            Thread.sleep(100);
        }
        q.dispose();
        t.dispose();
        warm.close();
        System.out.println("soak " + name + ": warmed up in " + (System.currentTimeMillis() - warmStartMs) + " ms (" + trades.get()
            + " trades on a throwaway bus); standing by for " + startFile);
        if (readyFile != null) {
            Files.writeString(readyFile, name + " " + System.currentTimeMillis() + "\n", StandardCharsets.UTF_8);
        }
        while (!Files.exists(startFile) && System.currentTimeMillis() < endMs.getAsLong()) {
            Thread.sleep(20);
        }
        System.out.println("soak " + name + ": start file seen at " + System.currentTimeMillis());
    }

    private static LongSupplier fixedEnd(final long endMs) {
        return () -> endMs;
    }

    /** The run's end from a file that appears once the run's traffic window is fixed; read at most once a second. */
    private static final class EndFile implements LongSupplier {
        private final Path file;
        private final long boundMs;
        private long endMs = -1;
        private long nextLookMs;

        EndFile(final Path file, final long boundMs) {
            this.file = file;
            this.boundMs = boundMs;
        }

        @Override
        public long getAsLong() {
            final long now = System.currentTimeMillis();
            if (endMs < 0 && now >= nextLookMs) {
                nextLookMs = now + 1000;
                try {
                    final String text = Files.exists(file) ? Files.readString(file).trim() : "";
                    if (!text.isEmpty()) {
                        endMs = Long.parseLong(text) * 1000;
                        System.out.println("soak: the run ends at " + endMs + " (" + file + ")");
                    }
                } catch (final IOException | NumberFormatException e) {
                    System.out.println("soak: cannot read the end time yet: " + e); // written by another guest: look again
                }
            }
            return endMs >= 0 ? endMs : boundMs;
        }
    }

    private static String require(final Map<String, String> opt, final String key) {
        final String v = opt.get(key);
        if (v == null) {
            System.err.println("SoakNode: --" + key + " is required");
            System.exit(2);
        }
        return v;
    }

    private static int publish(final Bus bus, final Path out, final String name, final int quotesPerS, final LongSupplier endMs, final Path startFile,
                               final Path readyFile) throws Exception {
        if (readyFile != null) {
            Files.writeString(readyFile, name + " " + System.currentTimeMillis() + "\n", StandardCharsets.UTF_8); // bus up
        }
        if (startFile != null) {
            // a standby: its bus is up and connected, its publications appear only when it takes over
            while (!Files.exists(startFile) && System.currentTimeMillis() < endMs.getAsLong()) {
                Thread.sleep(100);
            }
            System.out.println("soak " + name + ": taking over at " + System.currentTimeMillis());
        }
        final BusPublication<Quote> quotes = bus.publication(MarketDataTopics.QUOTES);
        final BusPublication<Trade> trades = bus.publication(MarketDataTopics.TRADES);
        // written at once: a publisher killed with -9 leaves no summary, and the report still needs its sessions
        Files.writeString(out.resolve("pub-" + name + ".start"), "name=" + name + "\nquoteSession=" + quotes.sessionId() + "\ntradeSession="
            + trades.sessionId() + "\nstartMs=" + System.currentTimeMillis() + "\n", StandardCharsets.UTF_8);
        final long periodNs = TimeUnit.SECONDS.toNanos(1) / Math.max(1, quotesPerS);
        long quoteSeq = 0;
        long tradeSeq = 0;
        long quoteNotSent = 0;
        long tradeRetries = 0;
        long ticks = 0;
        boolean tradeDue = false;
        long nextNs = System.nanoTime();
        long nextLineMs = System.currentTimeMillis() + 1000;
        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("pub-" + name + ".csv")))) {
            csv.println("epoch_ms,quotes_sent,trades_sent,quotes_not_sent,trade_retries,refused_peers");
            while (System.currentTimeMillis() < endMs.getAsLong()) {
                final long now = System.nanoTime();
                if (now < nextNs) {
                    LockSupport.parkNanos(Math.min(nextNs - now, 1_000_000));
                    continue;
                }
                nextNs += periodNs;
                if (now - nextNs > TimeUnit.SECONDS.toNanos(1)) {
                    nextNs = now; // fell behind (a stalled guest): do not burst to catch up
                }
                ticks++;
                // the per-publisher sequence advances only for messages the bus took, so every gap a subscriber sees is a
                // message the bus sent and the subscriber did not get
                if (quotes.offer(SoakMessages.quote(quoteSeq, System.currentTimeMillis() * 1_000_000L)) == PublishStatus.OK) {
                    quoteSeq++;
                } else {
                    quoteNotSent++;
                }
                if (ticks % 4 == 0) {
                    tradeDue = true;
                }
                if (tradeDue) {
                    if (trades.offer(SoakMessages.trade(tradeSeq, System.currentTimeMillis() * 1_000_000L)) == PublishStatus.OK) {
                        tradeSeq++;
                        tradeDue = false;
                    } else {
                        tradeRetries++; // reliable: the same trade again on the next tick
                    }
                }
                final long nowMs = System.currentTimeMillis();
                if (nowMs >= nextLineMs) {
                    csv.println(nowMs + "," + quoteSeq + "," + tradeSeq + "," + quoteNotSent + "," + tradeRetries + "," + refused.getAsLong());
                    csv.flush();
                    nextLineMs += 1000;
                }
            }
        }
        final String summary = "role=publisher\nname=" + name + "\nquoteSession=" + quotes.sessionId() + "\ntradeSession=" + trades.sessionId()
            + "\nquotesSent=" + quoteSeq + "\ntradesSent=" + tradeSeq + "\nquotesNotSent=" + quoteNotSent + "\ntradeRetries=" + tradeRetries + "\n";
        quotes.close();
        trades.close();
        return closeAndCheck(bus, out, name, summary);
    }

    private static int subscribe(final Bus bus, final Path out, final String name, final Path stopFile, final LongSupplier endMs, final Path readyFile)
        throws Exception {
        final Map<Integer, StreamCheck> quoteChecks = new TreeMap<>();
        final Map<Integer, StreamCheck> tradeChecks = new TreeMap<>();
        final Histogram latency = new Histogram(TimeUnit.SECONDS.toMicros(600), 3);
        final Histogram interval = new Histogram(TimeUnit.SECONDS.toMicros(600), 3);
        final Object lock = new Object();
        final Disposable q = checked(bus, MarketDataTopics.QUOTES, "quotes", Quote::feedSequence, SoakMessages::verify, quoteChecks, lock, latency, interval);
        final Disposable t = checked(bus, MarketDataTopics.TRADES, "trades", Trade::tradeId, SoakMessages::verify, tradeChecks, lock, latency, interval);
        long nextLineMs = System.currentTimeMillis() + 1000;
        long nextSummaryMs = System.currentTimeMillis() + SUMMARY_EVERY_MS;
        boolean ready = false;
        // bound: the run's end plus time for the publisher to finish and the stop file to appear

        try (PrintWriter csv = new PrintWriter(Files.newBufferedWriter(out.resolve("sub-" + name + ".csv")))) {
            csv.println("epoch_ms,quotes,trades,quote_gaps_observed,quote_gaps_reported,trades_lost,p50_us,p99_us,max_us");
            while (!Files.exists(stopFile) && System.currentTimeMillis() < endMs.getAsLong() + TimeUnit.SECONDS.toMillis(180)) {
                Thread.sleep(50);
                final long nowMs = System.currentTimeMillis();
                if (nowMs >= nextLineMs) {
                    synchronized (lock) {
                        csv.println(nowMs + "," + sum(quoteChecks, StreamCheck::received) + "," + sum(tradeChecks, StreamCheck::received) + ","
                            + sum(quoteChecks, StreamCheck::lost) + "," + sum(quoteChecks, StreamCheck::reportedLost) + ","
                            + sum(tradeChecks, StreamCheck::lost) + "," + interval.getValueAtPercentile(50) + "," + interval.getValueAtPercentile(99)
                            + "," + interval.getMaxValue());
                        interval.reset();
                    }
                    csv.flush();
                    nextLineMs += 1000;
                }
                if (readyFile != null && !ready) {
                    synchronized (lock) {
                        ready = !tradeChecks.isEmpty();
                    }
                    if (ready) {
                        Files.writeString(readyFile, name + " " + nowMs + "\n", StandardCharsets.UTF_8);
                    }
                }
                if (nowMs >= nextSummaryMs) {
                    writeSummary(out, name, lock, quoteChecks, tradeChecks, latency, "running");
                    nextSummaryMs += SUMMARY_EVERY_MS;
                }
            }
        }
        Thread.sleep(2000); // the last messages in flight
        writeSummary(out, name, lock, quoteChecks, tradeChecks, latency, "stopped");
        q.dispose();
        t.dispose();
        final StringBuilder summary = new StringBuilder();
        synchronized (lock) {
            summary.append(summaryText(name, quoteChecks, tradeChecks, latency, "closed"));
        }
        return closeAndCheck(bus, out, name, summary.toString());
    }

    /**
     * Subscribes to {@code topic} and feeds every message into the {@link StreamCheck} of its publisher session. A
     * subscription that fails (e.g. a RELIABLE resume outside the retention window) is recorded with its time and
     * subscribed again after 1 s: the report lists every error, and the node keeps proving what it receives after it.
     */
    private static <T> Disposable checked(final Bus bus, final Topic<T> topic, final String label, final ToLongFunction<T> sequence,
                                          final Predicate<T> verify, final Map<Integer, StreamCheck> checks, final Object lock,
                                          final Histogram latency, final Histogram interval) {
        return bus.subscribeReceived(topic, SubscribeOptions.defaults())
            .doOnError(e -> recordError(lock, label, e))
            .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, Duration.ofSeconds(1)))
            .subscribe(r -> {
                synchronized (lock) {
                    checks.computeIfAbsent(r.sessionId(), k -> new StreamCheck()).onMessage(sequence.applyAsLong(r.value()), r.lostBefore(),
                        verify.test(r.value()));
                    record(latency, interval, r);
                }
            });
    }

    private static void recordError(final Object lock, final String topic, final Throwable e) {
        final String line = System.currentTimeMillis() + ":" + e.getClass().getName() + ":" + String.valueOf(e.getMessage()).replaceAll("[\\r\\n|=]", " ");
        System.out.println("soak: " + topic + " subscription failed (subscribing again in 1 s): " + line);
        synchronized (lock) {
            ERRORS.merge(topic, line, (a, b) -> a + "|" + b);
        }
    }

    private static void record(final Histogram latency, final Histogram interval, final Received<?> r) {
        final java.time.Instant now = java.time.Instant.now(); // microsecond wall clock, not currentTimeMillis' milliseconds
        final long us = Math.max(0, (now.getEpochSecond() * 1_000_000_000L + now.getNano() - r.timestampNs()) / 1000);
        final long clamped = Math.min(us, latency.getHighestTrackableValue());
        latency.recordValue(clamped);
        interval.recordValue(clamped);
    }

    private static long sum(final Map<Integer, StreamCheck> checks, final java.util.function.ToLongFunction<StreamCheck> f) {
        long total = 0;
        for (final StreamCheck c : checks.values()) {
            total += f.applyAsLong(c);
        }
        return total;
    }

    private static String summaryText(final String name, final Map<Integer, StreamCheck> quoteChecks, final Map<Integer, StreamCheck> tradeChecks,
                                      final Histogram latency, final String state) {
        final StringBuilder sb = new StringBuilder("role=subscriber\nname=" + name + "\nstate=" + state + "\n");
        ERRORS.forEach((topic, lines) -> sb.append(topic).append(".errors=").append(lines).append('\n'));
        quoteChecks.forEach((s, c) -> sb.append("quotes.session.").append(s).append('=').append(c.summary()).append('\n'));
        tradeChecks.forEach((s, c) -> sb.append("trades.session.").append(s).append('=').append(c.summary()).append('\n'));
        quoteChecks.forEach((s, c) -> sb.append("quotes.gaps.").append(s).append('=').append(c.gapEvents()).append('\n'));
        tradeChecks.forEach((s, c) -> sb.append("trades.gaps.").append(s).append('=').append(c.gapEvents()).append('\n'));
        final ByteBuffer buf = ByteBuffer.allocate(latency.getNeededByteBufferCapacity());
        final int n = latency.encodeIntoCompressedByteBuffer(buf);
        sb.append("latencyHistogram=").append(Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buf.array(), n))).append('\n');
        return sb.toString();
    }

    private static void writeSummary(final Path out, final String name, final Object lock, final Map<Integer, StreamCheck> quoteChecks,
                                     final Map<Integer, StreamCheck> tradeChecks, final Histogram latency, final String state) throws IOException {
        final String text;
        synchronized (lock) {
            text = summaryText(name, quoteChecks, tradeChecks, latency, state);
        }
        final Path tmp = out.resolve("sub-" + name + ".summary.tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, out.resolve("sub-" + name + ".summary"), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** Closes the bus, then checks that no bus thread is left or spinning; writes the final summary. @return exit code */
    private static int closeAndCheck(final Bus bus, final Path out, final String name, final String summary) throws Exception {
        final long heapBeforeClose = JvmCheck.heapAfterGcBytes();
        final String counters = String.valueOf(bus.stats().transportCounters()); // before close: what the transport went through
        final long t0 = System.nanoTime();
        bus.close();
        final long closeMs = (System.nanoTime() - t0) / 1_000_000;
        final List<String> left = JvmCheck.awaitNoBusThreads(10_000);
        final List<String> spinning = JvmCheck.spinningThreads(1000, 0.2);
        final long heapAfterClose = JvmCheck.heapAfterGcBytes();
        final String text = summary + "refusedPeers=" + refused.getAsLong()
            + "\ncloseMs=" + closeMs + "\nbusThreadsLeft=" + String.join(";", left) + "\nspinningThreads="
            + String.join(";", spinning) + "\nheapBeforeCloseKiB=" + (heapBeforeClose >> 10) + "\nheapAfterCloseKiB=" + (heapAfterClose >> 10)
            + "\ntransportCounters=" + counters + "\nfinal=true\n";
        final String prefix = summary.startsWith("role=publisher") ? "pub-" : "sub-";
        Files.writeString(out.resolve(prefix + name + ".summary"), text, StandardCharsets.UTF_8);
        System.out.println("soak " + name + ": closed in " + closeMs + " ms; threads left " + left + "; spinning " + spinning);
        return left.isEmpty() && spinning.isEmpty() ? 0 : 1;
    }
}
