package io.rdmabus.benchmarks;

import java.io.IOException;
import java.io.PrintStream;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import io.rdmabus.Bus;
import io.rdmabus.BusException;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.IdleStrategies;
import io.rdmabus.PublishStatus;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.ThreadingMode;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.samples.cli.CliSupport;
import io.rdmabus.samples.support.Offers;
import io.rdmabus.spi.StaticSeedDiscovery;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.IdleStrategy;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import reactor.core.Disposable;

/**
 * The bus half of {@code lab/bench/rxe-vs-perftest.sh}: the same measurements as perftest's {@code ib_send_lat -R}
 * and {@code ib_send_bw -c UD} (or {@code -c RC}), through the bus over the {@code rdma} transport, between two processes on rxe.
 *
 * <ul>
 *   <li>{@code ping-<idle>}: RELIABLE round trips of {@code --size} bytes, one at a time (server echoes, client
 *   measures), once per idle strategy in {@code --idle}; each pair of buses uses its own rdma_cm port.</li>
 *   <li>{@code rate}: BEST_EFFORT (or, with {@code --rate-delivery RELIABLE}, RELIABLE) messages of {@code --size}
 *   bytes, server publishes as fast as the topic takes them ({@code --rate-batch} per offer) for
 *   {@code --rate-warmup-s + --rate-s} seconds, client subscribes. Each payload carries its sequence number, so the
 *   client counts exactly the messages of the measured window (sequence range sent after the warm-up) and times them
 *   with its own clock (the guests' clocks are not compared).</li>
 * </ul>
 * Both sides coordinate through files in {@code --sync} (a directory both can read and write, {@code LAB_SHARED} in
 * the lab). The server also snapshots its process's queue pairs ({@code rdma resource show qp}) before and after the
 * rate phase, so the report says which QP type (RC or UD) carried the rate phase's messages. The client writes every
 * result to {@code --results} (a properties file); a phase that failed is written as {@code <phase>.error}, never as a
 * number. Timing is reported, never asserted.
 *
 * <p>{@code --threading} picks the buses' {@link ThreadingMode}. In {@code INVOKER} mode this program is the
 * application loop: every thread that waits for the bus (the ping client for its pong, the echo server, the rate
 * publisher between offers and the rate subscriber) calls {@link Bus#doWork()} while it waits and idles under the
 * phase's idle strategy when a cycle found nothing to do, so receiving, delivering and echoing run on that one thread.
 */
@Command(name = "rxe-bus-bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Bus over rdma: RELIABLE ping-pong RTT and BEST_EFFORT (or RELIABLE) message rate between two processes (see lab/bench/).")
public final class RxeBusBench implements Callable<Integer> {
    /** The kernel's name (first 15 characters) of a bus's shared thread, {@code rdma-bus-shared-<bus>}. */
    private static final String SHARED_THREAD_COMM = "rdma-bus-shared";
    private static final int HEADER_BYTES = 16; // ping: send time ns + sequence; rate: sequence + spare
    private static final long RESEND_AFTER_NS = TimeUnit.SECONDS.toNanos(1);
    private static final int RATE_PORT_OFFSET = 10;
    private static final int PSN_MASK = (1 << 24) - 1;

    @Option(names = "--role", required = true, description = "server (pong + rate publisher), client (ping + subscriber), or both (two buses here)")
    String role;
    @Option(names = "--bind", description = "IPv4 address rdma_cm binds (default: $LAB_SELF_IP, else the transport's default)")
    String bind;
    @Option(names = "--peer", description = "client: the server's IPv4 address (default: --bind, i.e. loopback on the same device)")
    String peer;
    @Option(names = "--port-base", defaultValue = "7900",
        description = "rdma_cm port of the first ping phase; phase i uses base+i, rate base+10 (default: ${DEFAULT-VALUE})")
    int portBase;
    @Option(names = "--idle", split = ",", defaultValue = "backoff,yielding,busy-spin",
        description = "idle strategies of the ping phases, one phase each (default: ${DEFAULT-VALUE})")
    List<String> idles;
    @Option(names = "--subscriber", defaultValue = "copy",
        description = "ping phases' subscribers: copy (Bus.subscribe, a Flux) or in-place (Bus.subscribeInPlace, zero-copy on the "
            + "poller thread) (default: ${DEFAULT-VALUE})")
    String subscriber;
    @Option(names = "--threading", defaultValue = "SHARED",
        description = "the buses' threading mode: DEDICATED, SHARED or INVOKER (this program's waiting threads call Bus.doWork()) "
            + "(default: ${DEFAULT-VALUE})")
    ThreadingMode threading;
    @Option(names = {"-n", "--pings"}, defaultValue = "2000", description = "measured round trips per ping phase (default: ${DEFAULT-VALUE})")
    int pings;
    @Option(names = "--warmup", defaultValue = "1000", description = "round trips before measuring, at least (default: ${DEFAULT-VALUE})")
    int warmup;
    @Option(names = "--warmup-s", defaultValue = "30",
        description = "seconds of round trips before measuring, at least: the guests' JIT needs time, not a count (default: ${DEFAULT-VALUE})")
    int warmupS;
    @Option(names = {"-s", "--size"}, defaultValue = "64", description = "payload bytes, >= 16 (default: ${DEFAULT-VALUE})")
    int sizeBytes;
    @Option(names = "--rate-s", defaultValue = "10", description = "measured seconds of the rate phase, 0 = skip it (default: ${DEFAULT-VALUE})")
    int rateS;
    @Option(names = "--rate-warmup-s", defaultValue = "15", description = "unmeasured seconds of publishing first (default: ${DEFAULT-VALUE})")
    int rateWarmupS;
    @Option(names = "--rate-batch", defaultValue = "1",
        description = "rate phase: messages per offer; above 1 the publisher uses BusPublication's batch offer (default: ${DEFAULT-VALUE})")
    int rateBatch;
    @Option(names = "--rate-delivery", defaultValue = "BEST_EFFORT",
        description = "rate phase's topic: BEST_EFFORT (UD datagrams over rdma) or RELIABLE (RC, lossless, credit-bound) (default: ${DEFAULT-VALUE})")
    Delivery rateDelivery;
    @Option(names = "--phase-timeout-s", defaultValue = "240", description = "bound on each phase, connection set-up included (default: ${DEFAULT-VALUE})")
    int phaseTimeoutS;
    @Option(names = {"-p", "--property"}, paramLabel = "KEY=VALUE",
        description = "extra rdma transport property for every bus of both phases (e.g. -p rdma.frame.bytes=4096); repeatable")
    Map<String, String> properties = new LinkedHashMap<>();
    @Option(names = "--sync", description = "directory shared by both sides (default: a fresh temporary directory, only for --role both)")
    Path sync;
    @Option(names = "--results", description = "client/both: properties file for the results (default: none)")
    Path resultsFile;

    private final Properties results = new Properties();
    private final PrintStream out = System.out;

    /** For picocli. */
    public RxeBusBench() {
    }

    /** @param args command line */
    public static void main(final String[] args) {
        System.exit(CliSupport.commandLine(new RxeBusBench()).execute(args));
    }

    /** @return the results so far (for tests) */
    Properties results() {
        return results;
    }

    @Override
    public Integer call() throws Exception {
        if (pings < 1 || warmup < 0 || warmupS < 0 || sizeBytes < HEADER_BYTES || rateS < 0 || rateWarmupS < 0 || rateBatch < 1 || phaseTimeoutS < 1
            || idles.isEmpty()) {
            throw new IllegalArgumentException("need --pings >= 1, --warmup >= 0, --warmup-s >= 0, --size >= " + HEADER_BYTES
                + ", --rate-s >= 0, --rate-batch >= 1, --phase-timeout-s >= 1, "
                + "some --idle");
        }
        if (!"copy".equals(subscriber) && !"in-place".equals(subscriber)) {
            throw new IllegalArgumentException("--subscriber must be copy or in-place, was " + subscriber);
        }
        for (final String idle : idles) {
            IdleStrategies.supplier(idle); // fail fast on a bad name
        }
        if (bind == null || bind.isBlank()) {
            final String self = System.getenv("LAB_SELF_IP");
            bind = self == null || self.isBlank() ? null : self.trim();
        }
        if (peer == null) {
            peer = bind;
        }
        switch (role) {
            case "server" -> {
                requireSync();
                server();
                return 0;
            }
            case "client" -> {
                requireSync();
                if (peer == null) {
                    throw new IllegalArgumentException("--role client needs --peer (the server's address) or LAB_SELF_IP/--bind for loopback");
                }
                return client() ? 0 : 1;
            }
            case "both" -> {
                if (sync == null) {
                    sync = Files.createTempDirectory("rxe-bus-bench");
                }
                if (peer == null) {
                    throw new IllegalArgumentException("--role both needs --bind (or LAB_SELF_IP): the address of the rdma device");
                }
                final Throwable[] serverError = new Throwable[1];
                final Thread serverThread = new Thread(() -> {
                    try {
                        server();
                    } catch (final Exception | Error ex) {
                        serverError[0] = ex;
                        ex.printStackTrace();
                    }
                }, "rxe-bus-bench-server");
                serverThread.start();
                final boolean ok = client();
                serverThread.join(TimeUnit.SECONDS.toMillis(phaseTimeoutS));
                return ok && serverError[0] == null && !serverThread.isAlive() ? 0 : 1;
            }
            default -> throw new IllegalArgumentException("--role must be server, client or both, not '" + role + "'");
        }
    }

    private void requireSync() {
        if (sync == null || !Files.isDirectory(sync)) {
            throw new IllegalArgumentException("--role " + role + " needs --sync <directory shared with the other side> (e.g. $LAB_SHARED/bench)");
        }
    }

    // ---------------------------------------------------------------- server: pong and rate publisher

    private void server() throws IOException, InterruptedException {
        for (int i = 0; i < idles.size(); i++) {
            final String phase = "ping-" + idles.get(i);
            try (Bus bus = newBus("pong-" + idles.get(i), idles.get(i), portBase + i, null)) {
                final Disposable ponger = startPonger(bus);
                log("server: %s echoing on %s:%d (%s, %s)", phase, bind, portBase + i, bus.transportName(), threading);
                final boolean done = awaitFile(phase + ".done", phaseTimeoutS + warmupS, bus, idles.get(i));
                ponger.dispose();
                log("server: %s %s", phase, done ? "finished" : "timed out waiting for the client");
            } catch (final RuntimeException ex) {
                log("server: %s failed: %s", phase, ex);
                signal(phase + ".server-error", ex.toString());
            }
        }
        if (rateS > 0) {
            publishRate();
        }
    }

    /**
     * Echoes every ping as a pong from the delivering thread (copy: the delivery agent; in-place: the poller, from a
     * reused array): one publication, one writer.
     */
    private Disposable startPonger(final Bus bus) {
        final BusPublication<byte[]> pong = bus.publication(PONG);
        final Consumer<byte[]> echo = ping -> {
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            int status;
            while ((status = pong.offer(ping)) != PublishStatus.OK && status != PublishStatus.CLOSED && System.nanoTime() < deadlineNs) {
                Thread.onSpinWait();
            }
        };
        final byte[] echoed = new byte[sizeBytes];
        final Disposable subscription = "in-place".equals(subscriber)
            ? bus.subscribeInPlace(PING, (buffer, offset, length, header) -> {
                buffer.getBytes(offset, echoed, 0, Math.min(length, echoed.length));
                echo.accept(echoed);
            })
            : bus.subscribe(PING).subscribe(echo);
        return () -> {
            subscription.dispose();
            pong.close();
        };
    }

    private void publishRate() throws IOException, InterruptedException {
        final Properties report = new Properties();
        final String idle = "backoff";
        final boolean invoker = threading == ThreadingMode.INVOKER;
        try (Bus bus = newBus("rate-pub", idle, portBase + RATE_PORT_OFFSET, null);
             BusPublication<byte[]> publication = bus.publication(rateTopic())) {
            log("server: rate publisher on %s:%d, waiting for the subscriber", bind, portBase + RATE_PORT_OFFSET);
            awaitConnected(bus, publication, System.nanoTime() + TimeUnit.SECONDS.toNanos(phaseTimeoutS));
            // The subscriber says when its subscription is in place; then give the SUB a moment to settle.
            if (!awaitFile("rate.subscribed", phaseTimeoutS, bus, idle)) {
                throw new BusException("the subscriber never wrote rate.subscribed");
            }
            final QpSnapshot before = QpSnapshot.take();
            final byte[][] payloads = new byte[rateBatch][sizeBytes];
            final IdleStrategy waiting = IdleStrategies.supplier(idle).get();
            final long startNs = System.nanoTime();
            final long measureStartNs = startNs + TimeUnit.SECONDS.toNanos(rateWarmupS);
            final long endNs = measureStartNs + TimeUnit.SECONDS.toNanos(rateS);
            long seq = 0;
            long firstMeasuredSeq = -1;
            long notOk = 0;
            long nowNs;
            long nextReportNs = startNs + TimeUnit.SECONDS.toNanos(1);
            long lastReportSeq = 0;
            ThreadTimes sharedBefore = null;
            ThreadTimes selfBefore = null;
            while ((nowNs = System.nanoTime()) < endNs) {
                if (firstMeasuredSeq < 0 && nowNs >= measureStartNs) {
                    firstMeasuredSeq = seq;
                    sharedBefore = ThreadTimes.take(SHARED_THREAD_COMM);
                    selfBefore = ThreadTimes.self();
                }
                if (nowNs >= nextReportNs) { // once a second: shows when the JIT has warmed the path up
                    log("server: rate %s second: %,d messages taken", firstMeasuredSeq < 0 ? "warm-up" : "measured", seq - lastReportSeq);
                    lastReportSeq = seq;
                    nextReportNs += TimeUnit.SECONDS.toNanos(1);
                }
                for (int i = 0; i < rateBatch; i++) {
                    writeLong(payloads[i], 0, seq + i);
                }
                final int status = Offers.offer(publication, payloads, rateBatch); // messages taken (> 0) or a refusal's code
                if (status > 0) {
                    seq += status;
                    waiting.reset();
                } else if (status == PublishStatus.CLOSED || status == PublishStatus.MESSAGE_TOO_LARGE) {
                    throw new BusException("rate publishing failed: " + PublishStatus.describe(status));
                } else {
                    notOk++;
                    // no subscriber credit, no free send slot (or not connected): back off as the bus's agents do;
                    // INVOKER: this loop runs the bus's cycle while it waits (send completions free the slots)
                    waiting.idle(invoker ? bus.doWork() : 0);
                }
            }
            final QpSnapshot after = QpSnapshot.take();
            if (sharedBefore != null) {
                // the bus's shared thread (SHARED): how often it woke and what it cost the one vCPU beside the publisher
                report.setProperty("rate.pub.shared-thread", ThreadTimes.take(SHARED_THREAD_COMM).describeSince(sharedBefore, rateS));
                report.setProperty("rate.pub.publishing-thread",
                    ThreadTimes.self().describeSince(selfBefore, rateS));
            }
            final long measured = seq - firstMeasuredSeq;
            report.setProperty("rate.sent.first-seq", Long.toString(firstMeasuredSeq));
            report.setProperty("rate.sent.last-seq", Long.toString(seq - 1));
            report.setProperty("rate.sent.messages", Long.toString(measured));
            report.setProperty("rate.sent.msg-per-s", String.format("%.0f", measured / (double) rateS));
            report.setProperty("rate.sent.total", Long.toString(seq));
            report.setProperty("rate.sent.not-ok-offers", Long.toString(notOk));
            report.setProperty("rate.qp.before", before.describe());
            report.setProperty("rate.qp.after", after.describe());
            report.setProperty("rate.path", after.pathSince(before, seq));
            report.setProperty("rate.delivery", rateDelivery.name());
            log("server: rate published %,d messages (%,d in the measured %d s); path: %s", seq, measured, rateS,
                report.getProperty("rate.path"));
            // Keep the bus open until the subscriber has counted, so nothing in flight is cut off.
            writeProperties(sync.resolve("rate.done.tmp"), report);
            Files.move(sync.resolve("rate.done.tmp"), sync.resolve("rate.done"), StandardCopyOption.ATOMIC_MOVE);
            awaitFile("rate.counted", phaseTimeoutS, bus, idle);
        } catch (final RuntimeException ex) {
            log("server: rate failed: %s", ex);
            signal("rate.server-error", ex.toString());
        }
    }

    // ---------------------------------------------------------------- client: ping and rate subscriber

    private boolean client() throws IOException, InterruptedException {
        boolean ok = true;
        results.setProperty("size.bytes", Integer.toString(sizeBytes));
        results.setProperty("pings", Integer.toString(pings));
        results.setProperty("warmup", Integer.toString(warmup));
        results.setProperty("warmup.s", Integer.toString(warmupS));
        for (int i = 0; i < idles.size(); i++) {
            final String phase = "ping-" + idles.get(i);
            try (Bus bus = newBus("ping-" + idles.get(i), idles.get(i), 0, peer + ":" + (portBase + i))) {
                final Histogram rtt = ping(bus, idles.get(i));
                results.setProperty(phase + ".count", Long.toString(rtt.getTotalCount()));
                for (final double p : new double[] {50, 90, 99, 99.9}) {
                    results.setProperty(phase + ".p" + pct(p) + ".us", micros(rtt.getValueAtPercentile(p)));
                }
                results.setProperty(phase + ".min.us", micros(rtt.getMinValue()));
                results.setProperty(phase + ".max.us", micros(rtt.getMaxValue()));
                results.setProperty(phase + ".mean.us", String.format("%.1f", rtt.getMean() / 1e3));
                log("client: %s %,d round trips of %d B: rtt p50 %s us, p99 %s us, min %s us (idle %s)", phase, rtt.getTotalCount(), sizeBytes,
                    micros(rtt.getValueAtPercentile(50)), micros(rtt.getValueAtPercentile(99)), micros(rtt.getMinValue()), idles.get(i));
            } catch (final RuntimeException ex) {
                ok = false;
                results.setProperty(phase + ".error", ex.toString());
                log("client: %s FAILED: %s", phase, ex);
            } finally {
                signal(phase + ".done", "");
            }
            save();
        }
        if (rateS > 0) {
            try {
                subscribeRate();
            } catch (final RuntimeException ex) {
                ok = false;
                results.setProperty("rate.error", ex.toString());
                log("client: rate FAILED: %s", ex);
            } finally {
                signal("rate.counted", "");
            }
            save();
        }
        return ok;
    }

    private Histogram ping(final Bus bus, final String idleName) {
        final AtomicLong lastPongSequence = new AtomicLong(-1);
        final AtomicLong lastRttNs = new AtomicLong();
        final Disposable subscription = "in-place".equals(subscriber)
            ? bus.subscribeInPlace(PONG, (buffer, offset, length, header) -> {
                lastRttNs.set(System.nanoTime() - buffer.getLong(offset, java.nio.ByteOrder.LITTLE_ENDIAN));
                lastPongSequence.set(buffer.getLong(offset + 8, java.nio.ByteOrder.LITTLE_ENDIAN));
            })
            : bus.subscribe(PONG).subscribe(pong -> {
                lastRttNs.set(System.nanoTime() - readLong(pong, 0));
                lastPongSequence.set(readLong(pong, 8));
            });
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        long resent = 0;
        try (BusPublication<byte[]> ping = bus.publication(PING)) {
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(phaseTimeoutS + (long) warmupS);
            awaitConnected(bus, ping, deadlineNs);
            final boolean invoker = threading == ThreadingMode.INVOKER;
            // The pinging thread waits the way the bus's agents do (a spinning waiter under backoff would not be like for like).
            final IdleStrategy idle = IdleStrategies.supplier(idleName).get();
            final byte[] payload = new byte[sizeBytes];
            // Warm-up ends after --warmup round trips AND --warmup-s seconds: under TCG the JIT of the first phase is still
            // compiling the path after a fixed count, and the phase measured first came out slowest whatever its strategy.
            final long warmupEndNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(warmupS);
            long measuredFrom = -1; // the first measured round trip's sequence, once warm-up is over
            for (long seq = 0; measuredFrom < 0 || seq < measuredFrom + pings; seq++) {
                if (measuredFrom < 0 && seq >= warmup && System.nanoTime() >= warmupEndNs) {
                    measuredFrom = seq;
                }
                writeLong(payload, 8, seq);
                long sentNs = 0;
                idle.reset();
                while (lastPongSequence.get() != seq) {
                    final long nowNs = System.nanoTime();
                    if (nowNs > deadlineNs) {
                        throw new BusException("ping timed out after " + (phaseTimeoutS + warmupS) + " s at round trip " + seq
                            + (measuredFrom < 0 ? " (warming up)" : " (" + (seq - measuredFrom) + " of " + pings + " measured)"));
                    }
                    if (sentNs == 0 || nowNs - sentNs > RESEND_AFTER_NS) { // the pong subscription may not be announced yet
                        writeLong(payload, 0, nowNs);
                        if (ping.offer(payload) == PublishStatus.OK) {
                            resent += sentNs == 0 ? 0 : 1;
                            sentNs = nowNs;
                        }
                    }
                    if (invoker) {
                        idle.idle(bus.doWork()); // the pong arrives (and is delivered) on this thread
                    } else {
                        idle.idle();
                    }
                }
                if (measuredFrom >= 0) {
                    histogram.recordValue(lastRttNs.get());
                }
            }
            results.setProperty("ping-" + idleName + ".warmup-round-trips", Long.toString(measuredFrom));
        } finally {
            subscription.dispose();
        }
        results.setProperty("ping-" + idleName + ".resent", Long.toString(resent));
        return histogram;
    }

    private void subscribeRate() throws IOException, InterruptedException {
        final int capacity = 4 << 20; // sequence numbers are counted in a bitmap-free way: one receipt time per message
        final long[] receiptNs = new long[capacity];
        final long[] receiptSeq = new long[capacity];
        final AtomicLong received = new AtomicLong();
        final AtomicLong overflow = new AtomicLong();
        try (Bus bus = newBus("rate-sub", "backoff", 0, peer + ":" + (portBase + RATE_PORT_OFFSET))) {
            final Disposable subscription = bus.subscribe(rateTopic()).subscribe(m -> {
                final long n = received.get();
                if (n < capacity) {
                    receiptNs[(int) n] = System.nanoTime();
                    receiptSeq[(int) n] = readLong(m, 0);
                } else {
                    overflow.lazySet(overflow.get() + 1);
                }
                received.lazySet(n + 1); // single writer: the delivery thread
            });
            signal("rate.subscribed", "");
            log("client: rate subscriber connecting to %s:%d", peer, portBase + RATE_PORT_OFFSET);
            if (!awaitFile("rate.done", phaseTimeoutS + rateS + rateWarmupS, bus, "backoff")) {
                subscription.dispose();
                throw new BusException("the publisher did not finish (no rate.done in " + sync + ")");
            }
            final Properties pub = readProperties(sync.resolve("rate.done"));
            awaitFile(null, 1, bus, "backoff"); // 1 s for the messages still in flight when the publisher stopped
            for (final SubscriptionStats st : bus.stats().subscriptions()) { // before dispose: a disposed subscription is not listed
                if (st.topic().equals(RATE_TOPIC_NAME)) {
                    results.setProperty("rate.sub.frames-received", Long.toString(st.framesReceived()));
                    results.setProperty("rate.sub.dropped-by-subscriber", Long.toString(st.droppedBySubscriber()));
                    results.setProperty("rate.sub.gap-messages", Long.toString(st.gapMessages()));
                }
            }
            subscription.dispose();
            pub.forEach((k, v) -> results.setProperty((String) k, (String) v));
            final long firstSeq = Long.parseLong(pub.getProperty("rate.sent.first-seq"));
            final long lastSeq = Long.parseLong(pub.getProperty("rate.sent.last-seq"));
            final long n = Math.min(received.get(), capacity);
            long inWindow = 0;
            long firstNs = Long.MAX_VALUE;
            long lastNs = Long.MIN_VALUE;
            for (int i = 0; i < n; i++) {
                if (receiptSeq[i] >= firstSeq && receiptSeq[i] <= lastSeq) {
                    inWindow++;
                    firstNs = Math.min(firstNs, receiptNs[i]);
                    lastNs = Math.max(lastNs, receiptNs[i]);
                }
            }
            results.setProperty("rate.received.total", Long.toString(received.get()));
            results.setProperty("rate.received.messages", Long.toString(inWindow));
            results.setProperty("rate.received.overflow", Long.toString(overflow.get()));
            if (inWindow < 2) {
                throw new BusException("only " + inWindow + " of the measured window's " + (lastSeq - firstSeq + 1) + " messages arrived: no rate");
            }
            final double seconds = (lastNs - firstNs) / 1e9;
            results.setProperty("rate.received.seconds", String.format("%.3f", seconds));
            results.setProperty("rate.received.msg-per-s", String.format("%.0f", (inWindow - 1) / seconds));
            log("client: rate received %,d of %,d measured messages in %.2f s = %,.0f msg/s (publisher offered %s msg/s); path %s",
                inWindow, lastSeq - firstSeq + 1, seconds, (inWindow - 1) / seconds, pub.getProperty("rate.sent.msg-per-s"),
                pub.getProperty("rate.path"));
        }
    }

    // ---------------------------------------------------------------- plumbing

    static final Topic<byte[]> PING = Topic.of("rxebench.ping", Codecs.bytes(), Delivery.RELIABLE);
    static final Topic<byte[]> PONG = Topic.of("rxebench.pong", Codecs.bytes(), Delivery.RELIABLE);
    static final String RATE_TOPIC_NAME = "rxebench.rate";

    /** @return the rate phase's topic, of {@code --rate-delivery} */
    Topic<byte[]> rateTopic() {
        return Topic.of(RATE_TOPIC_NAME, Codecs.bytes(), rateDelivery);
    }

    /** A bus on rdma: listening on {@code listenPort} (if > 0), or seeded with {@code seed} (one direction only). */
    private Bus newBus(final String name, final String idle, final int listenPort, final String seed) {
        // A generous connect timeout: under TCG a cold JVM's accept (QP, registered buffers) can take longer than the
        // default 3 s, and a client that gives up makes the server accept a stale request (EINVAL) and start over.
        final var builder = Bus.builder().name(name).transport("rdma").idleStrategy(idle).threadingMode(threading)
            .transportProperty("rdma.connect.timeout.ms", "15000");
        if (bind != null) {
            builder.transportProperty("rdma.bind", bind);
        }
        properties.forEach(builder::transportProperty);
        if (listenPort > 0) {
            builder.transportProperty("rdma.cm.port.base", Integer.toString(listenPort)).transportProperty("rdma.cm.port.range", "1");
        } else {
            // the client's own listener: out of the way of the server's ports (in --role both they share the device)
            builder.transportProperty("rdma.cm.port.base", Integer.toString(portBase + 100)).transportProperty("rdma.cm.port.range", "64");
        }
        if (seed != null) {
            builder.discovery(new StaticSeedDiscovery(Map.of("rdma", List.of(seed))));
        }
        return builder.build();
    }

    /** Waits for a subscriber of {@code publication}; an {@code INVOKER} bus's cycles run here meanwhile. */
    private void awaitConnected(final Bus bus, final BusPublication<?> publication, final long deadlineNs) {
        final IdleStrategy idle = IdleStrategies.supplier("backoff").get();
        while (!publication.isConnected()) {
            if (System.nanoTime() > deadlineNs) {
                throw new BusException("no subscriber connected to '" + publication.topic().name() + "' in time: is the other side running?");
            }
            if (threading == ThreadingMode.INVOKER) {
                idle.idle(bus.doWork());
            } else {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
        }
    }

    /**
     * Waits (bounded) for the other side's file {@code name} in the sync directory (null: for the whole bound), looking
     * every 50 ms. An
     * {@code INVOKER} bus is driven meanwhile: this thread runs its cycles, idling under {@code idleName} when one found
     * nothing to do (the echo server's pongs and the subscriber's deliveries happen in here).
     */
    private boolean awaitFile(final String name, final long timeoutS, final Bus bus, final String idleName) throws InterruptedException {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
        final IdleStrategy idle = IdleStrategies.supplier(idleName).get();
        final long lookEveryNs = TimeUnit.MILLISECONDS.toNanos(50);
        long nextLookNs = System.nanoTime();
        while (true) {
            final long nowNs = System.nanoTime();
            if (nowNs - nextLookNs >= 0) {
                if (name != null && Files.exists(sync.resolve(name))) {
                    return true;
                }
                if (nowNs > deadlineNs) {
                    return false;
                }
                nextLookNs = nowNs + lookEveryNs;
            }
            if (threading == ThreadingMode.INVOKER) {
                idle.idle(bus.doWork());
            } else {
                Thread.sleep(50);
            }
        }
    }

    private void signal(final String name, final String content) throws IOException {
        final Path tmp = sync.resolve(name + ".tmp");
        Files.writeString(tmp, content);
        Files.move(tmp, sync.resolve(name), StandardCopyOption.ATOMIC_MOVE);
    }

    private void save() throws IOException {
        if (resultsFile != null) {
            writeProperties(resultsFile, results);
        }
    }

    private static void writeProperties(final Path file, final Properties p) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            p.store(w, "rxe-bus-bench");
        }
    }

    private static Properties readProperties(final Path file) throws IOException {
        final Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        return p;
    }

    private void log(final String format, final Object... args) {
        synchronized (out) {
            out.printf("[bench %tT] " + format + "%n", prepend(System.currentTimeMillis(), args));
            out.flush();
        }
    }

    private static Object[] prepend(final Object first, final Object[] rest) {
        final Object[] all = new Object[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }

    private static String pct(final double p) {
        return p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p);
    }

    private static String micros(final long ns) {
        return String.format("%.1f", ns / 1e3);
    }

    static long readLong(final byte[] b, final int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v |= (b[at + i] & 0xFFL) << (8 * i);
        }
        return v;
    }

    static void writeLong(final byte[] b, final int at, final long v) {
        for (int i = 0; i < 8; i++) {
            b[at + i] = (byte) (v >>> (8 * i));
        }
    }

    /**
     * This process's queue pairs as {@code rdma resource show qp} lists them (kernel netlink, independent of the
     * transport's own account): type, number and send PSN. The send PSN advances by one per packet sent, so two
     * snapshots tell which QP type carried a phase's traffic.
     */
    record QpSnapshot(List<String[]> qps, String error, String listing) {
        static QpSnapshot take() {
            try {
                // The kernel lists the id of the thread that created a QP (the transport's cm agent), not the process
                // id: match any thread of this process.
                final Set<String> tids = new HashSet<>();
                try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
                    tasks.forEach(t -> tids.add(t.getFileName().toString()));
                }
                final Process p = new ProcessBuilder("rdma", "resource", "show", "qp").redirectErrorStream(true).start();
                final String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    return new QpSnapshot(List.of(), "rdma resource show qp failed: " + text.strip(), text);
                }
                return parse(text, tids);
            } catch (final IOException ex) {
                return new QpSnapshot(List.of(), "cannot run rdma resource show qp: " + ex.getMessage(), "");
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
                return new QpSnapshot(List.of(), "interrupted", "");
            }
        }

        /**
         * @param listing output of {@code rdma resource show qp} (one QP per line, "key value" pairs)
         * @param tids    thread ids whose QPs to keep
         * @return the QPs (number, type, send PSN) of those threads
         */
        static QpSnapshot parse(final String listing, final Set<String> tids) {
            final List<String[]> qps = new ArrayList<>();
            for (final String line : listing.split("\n")) {
                final String[] t = line.trim().split("\\s+");
                if (tids.contains(String.valueOf(value(t, "pid")))) {
                    qps.add(new String[] {value(t, "lqpn"), value(t, "type"), value(t, "sq-psn")});
                }
            }
            return new QpSnapshot(qps, null, listing);
        }

        private static String value(final String[] tokens, final String key) {
            for (int i = 0; i + 1 < tokens.length; i++) {
                if (tokens[i].equals(key)) {
                    return tokens[i + 1];
                }
            }
            return null;
        }

        String describe() {
            if (error != null) {
                return error;
            }
            final StringBuilder sb = new StringBuilder();
            for (final String[] qp : qps) {
                sb.append(sb.isEmpty() ? "" : ", ").append(qp[1]).append(" lqpn ").append(qp[0]).append(" sq-psn ").append(qp[2]);
            }
            return sb.isEmpty() ? "no QP of this process's threads among: " + listing.strip().replace('\n', '|') : sb.toString();
        }

        /** Which QP type's send PSNs advanced between {@code before} and this snapshot, and by how much. */
        String pathSince(final QpSnapshot before, final long messagesSent) {
            if (error != null || before.error != null) {
                return "unknown (" + (error != null ? error : before.error) + ")";
            }
            long rc = 0;
            long ud = 0;
            long other = 0;
            for (final String[] qp : qps) {
                long delta = 0;
                for (final String[] old : before.qps) {
                    if (old[0] != null && old[0].equals(qp[0]) && old[2] != null && qp[2] != null) {
                        delta = (Long.parseLong(qp[2]) - Long.parseLong(old[2])) & PSN_MASK;
                    }
                }
                switch (String.valueOf(qp[1])) {
                    case "RC" -> rc += delta;
                    case "UD" -> ud += delta;
                    default -> other += delta;
                }
            }
            final String verdict = ud >= messagesSent / 2 && ud > rc ? "UD" : rc >= messagesSent / 2 && rc > ud ? "RC" : "unclear";
            return verdict + " (send PSNs advanced: RC " + rc + ", UD " + ud + (other > 0 ? ", other " + other : "") + "; " + messagesSent
                + " messages published)";
        }
    }
}
