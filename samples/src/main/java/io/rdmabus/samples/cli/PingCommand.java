package io.rdmabus.samples.cli;

import java.io.PrintWriter;
import java.nio.ByteOrder;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import io.rdmabus.Bus;
import io.rdmabus.BusException;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.ThreadingMode;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.samples.support.LatencyMeter;
import io.rdmabus.samples.support.LocalBuses;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import reactor.core.Disposable;

/**
 * {@code rdma-bus ping}: round trips through the bus (reliable topic {@code rdmabus.ping}, echoed on
 * {@code rdmabus.pong}), one at a time, with latency percentiles. {@code --role both} (default) runs both ends as
 * two buses in this process; {@code --role pong} in one process and {@code --role ping} in another measure across
 * processes (give each the transport properties/seeds to find the other). In {@code invoker} mode (the default here) no
 * bus has a thread of its own: the pinging thread runs its bus's duty cycles ({@code Bus.doWork()}) while it waits for each
 * pong, and the ponging end's are run by a loop of this command (a thread of its own with {@code --role both}, the
 * main thread with {@code --role pong}).
 */
@Command(name = "ping", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Round-trip latency through the bus (percentiles), in one process or between two.")
final class PingCommand implements Callable<Integer> {
    static final Topic<byte[]> PING = Topic.of("rdmabus.ping", Codecs.bytes(), Delivery.RELIABLE);
    static final Topic<byte[]> PONG = Topic.of("rdmabus.pong", Codecs.bytes(), Delivery.RELIABLE);
    private static final int HEADER_BYTES = 16; // send time ns + sequence
    private static final long RESEND_AFTER_NS = TimeUnit.SECONDS.toNanos(1);

    @Mixin
    TransportOptions transport;
    @Option(names = "--role", defaultValue = "both", description = "both (two buses here), ping or pong (one end per process) (default: ${DEFAULT-VALUE})")
    String role;
    @Option(names = {"-n", "--count"}, defaultValue = "10000", description = "measured round trips (default: ${DEFAULT-VALUE})")
    int count;
    @Option(names = "--warmup", defaultValue = "1000", description = "round trips before measuring (default: ${DEFAULT-VALUE})")
    int warmup;
    @Option(names = {"-s", "--size"}, defaultValue = "64", description = "message size in bytes, >= 16 (default: ${DEFAULT-VALUE})")
    int sizeBytes;
    @Option(names = "--timeout-s", defaultValue = "60", description = "give up after this long (pong: run this long) (default: ${DEFAULT-VALUE})")
    int timeoutS;
    @Option(names = "--subscriber", defaultValue = "in-place",
        description = "how both ends read: in-place (Bus.subscribeInPlace, zero-copy on the transport's receive thread) or copy "
            + "(Bus.subscribe, a Flux of byte[] on the bus's delivery agent) (default: ${DEFAULT-VALUE})")
    String subscriber;
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;
    private long resent;

    PingCommand() {
    }

    @Override
    public Integer call() throws InterruptedException {
        if (count < 1 || warmup < 0 || sizeBytes < HEADER_BYTES || sizeBytes > PING.maxMessageLength() || timeoutS < 1) {
            throw new IllegalArgumentException("need --count >= 1, --warmup >= 0, --size in " + HEADER_BYTES + ".." + PING.maxMessageLength()
                + ", --timeout-s >= 1");
        }
        if (!"in-place".equals(subscriber) && !"copy".equals(subscriber)) {
            throw new IllegalArgumentException("--subscriber must be in-place or copy, not '" + subscriber + "'");
        }
        // invoker unless told otherwise: on the 2-core box its p99 was lower than shared's in each of three runs and within
        // 5x its p50 in all three (docs/benchmarks-history.md, "Like-for-like raw contenders ...", "CLI ping, defaults")
        transport.drivesInvoker().defaultThreadingMode(ThreadingMode.INVOKER);
        final PrintWriter out = spec.commandLine().getOut();
        switch (role) {
            case "both" -> {
                if (transport.crossProcess()) {
                    throw new IllegalArgumentException("-p/--seed are for --role ping|pong (two processes); --role both wires its two buses itself");
                }
                final TransportOptions.InProcess settings = transport.inProcess(); // flags, then outside code, then ping's defaults
                final ThreadingMode threading = settings.threadingMode();
                try (LocalBuses buses = LocalBuses.create(settings.transport(), 2, settings.idleStrategy()).threadingMode(threading)) {
                    out.println("transport: " + buses.describe() + ", " + threading
                        + " threading, " + settings.idleStrategy() + " idle, " + subscriber + " subscribers");
                    final Bus pongBus = buses.newBus("pong");
                    final Bus pingBus = buses.newBus("ping");
                    final Disposable ponger = startPonger(pongBus);
                    final Disposable pongDriver = threading == ThreadingMode.INVOKER ? driveOnItsOwnThread(pongBus) : () -> { };
                    try {
                        return report(out, pinger(pingBus, threading == ThreadingMode.INVOKER, out)) ? 0 : 1;
                    } finally {
                        pongDriver.dispose();
                        ponger.dispose();
                    }
                }
            }
            case "pong" -> {
                try (Bus bus = transport.buildBus("pong")) {
                    final Disposable ponger = startPonger(bus);
                    out.println("transport: " + bus.transportName() + ", " + subscriber + " subscriber; echoing " + PING.name() + " -> "
                        + PONG.name() + " for " + timeoutS + " s");
                    out.flush();
                    if (transport.effectiveThreadingMode() == ThreadingMode.INVOKER) {
                        final long endNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
                        final IdleStrategy idle = pollingIdle();
                        while (System.nanoTime() < endNs) {
                            idle.idle(bus.doWork()); // this thread runs the pong bus: receives pings, echoes pongs
                        }
                    } else {
                        Thread.sleep(TimeUnit.SECONDS.toMillis(timeoutS));
                    }
                    ponger.dispose();
                    return 0;
                }
            }
            case "ping" -> {
                try (Bus bus = transport.buildBus("ping")) {
                    out.println("transport: " + bus.transportName() + ", " + subscriber + " subscriber");
                    return report(out, pinger(bus, transport.effectiveThreadingMode() == ThreadingMode.INVOKER, out)) ? 0 : 1;
                }
            }
            default -> throw new IllegalArgumentException("--role must be both, ping or pong, not '" + role + "'");
        }
    }

    /**
     * Echoes every ping as a pong, from the subscriber's thread (one publication, one writer); an in-place subscriber
     * copies the ping into one reused array first (the pong publication takes a {@code byte[]}).
     */
    private Disposable startPonger(final Bus bus) {
        final BusPublication<byte[]> pong = bus.publication(PONG);
        final IdleStrategy idle = new BackoffIdleStrategy(10, 20, 1_000, 100_000);
        final Consumer<byte[]> echo = ping -> {
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            idle.reset();
            int status;
            while ((status = pong.offer(ping)) != PublishStatus.OK && status != PublishStatus.CLOSED && System.nanoTime() < deadlineNs) {
                idle.idle();
            }
        };
        final byte[] echoed = new byte[sizeBytes];
        final Disposable subscription = inPlace()
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

    /** The idle strategy of a loop that runs a bus's duty cycles: that of the pinging loop. */
    private static IdleStrategy pollingIdle() {
        return new BackoffIdleStrategy(100, 100, 1_000, 50_000);
    }

    /** An {@code INVOKER} bus's duty cycles, run on a thread of their own until disposed. */
    private static Disposable driveOnItsOwnThread(final Bus bus) {
        final java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
        final Thread driver = new Thread(() -> {
            final IdleStrategy idle = pollingIdle();
            while (running.get()) {
                idle.idle(bus.doWork());
            }
        }, "ping-pong-bus-invoker");
        driver.setDaemon(true);
        driver.start();
        return () -> {
            running.set(false);
            try {
                driver.join(TimeUnit.SECONDS.toMillis(5));
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        };
    }

    /**
     * @param drives true for an {@code INVOKER} bus: this thread runs its duty cycles while it waits (the pong is
     *               received and delivered here)
     */
    private Histogram pinger(final Bus bus, final boolean drives, final PrintWriter out) {
        final AtomicLong lastPongSequence = new AtomicLong(-1);
        final AtomicLong lastRttNs = new AtomicLong();
        final Disposable subscription = inPlace()
            ? bus.subscribeInPlace(PONG, (buffer, offset, length, header) -> {
                lastRttNs.set(System.nanoTime() - buffer.getLong(offset, ByteOrder.LITTLE_ENDIAN));
                lastPongSequence.set(buffer.getLong(offset + 8, ByteOrder.LITTLE_ENDIAN));
            })
            : bus.subscribe(PONG).subscribe(pong -> {
                lastRttNs.set(System.nanoTime() - readLong(pong, 0));
                lastPongSequence.set(readLong(pong, 8));
            });
        final Histogram histogram = new Histogram(3);
        final Histogram interval = new Histogram(3);
        try (BusPublication<byte[]> ping = bus.publication(PING)) {
            final IdleStrategy idle = pollingIdle();
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
            awaitConnected(ping, deadlineNs, drives ? bus : null);
            final byte[] payload = new byte[sizeBytes];
            long nextReportNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            final long total = (long) warmup + count;
            for (long seq = 0; seq < total; seq++) {
                writeLong(payload, 8, seq);
                long sentNs = 0;
                idle.reset();
                while (lastPongSequence.get() != seq) {
                    final long nowNs = System.nanoTime();
                    if (nowNs > deadlineNs) {
                        throw new BusException("ping timed out after " + timeoutS + " s at round trip " + seq + " of " + total
                            + ": is the other end running (--role pong) and reachable?");
                    }
                    if (sentNs == 0 || nowNs - sentNs > RESEND_AFTER_NS) { // first send, or the pong end was not there yet
                        writeLong(payload, 0, nowNs);
                        if (ping.offer(payload) == PublishStatus.OK) {
                            if (sentNs != 0) {
                                resent++; // reported: on a reliable topic this should only happen before the pong end is up
                            }
                            sentNs = nowNs;
                        }
                    }
                    idle.idle(drives ? bus.doWork() : 0);
                }
                if (seq >= warmup) {
                    histogram.recordValue(lastRttNs.get());
                    interval.recordValue(lastRttNs.get());
                }
                if (System.nanoTime() >= nextReportNs) {
                    nextReportNs += TimeUnit.SECONDS.toNanos(1);
                    out.printf("  %,d / %,d round trips  last second: %s%n", seq + 1, total, LatencyMeter.percentiles(interval));
                    out.flush();
                    interval.reset();
                }
            }
        } finally {
            subscription.dispose();
        }
        return histogram;
    }

    private boolean inPlace() {
        return "in-place".equals(subscriber);
    }

    private boolean report(final PrintWriter out, final Histogram rtt) {
        out.printf("%,d round trips of %d bytes: rtt p50 %s p90 %s p99 %s p99.9 %s max %s (pings resent after 1 s without pong: %d)%n",
            rtt.getTotalCount(), sizeBytes,
            LatencyMeter.micros(rtt.getValueAtPercentile(50)), LatencyMeter.micros(rtt.getValueAtPercentile(90)),
            LatencyMeter.micros(rtt.getValueAtPercentile(99)), LatencyMeter.micros(rtt.getValueAtPercentile(99.9)),
            LatencyMeter.micros(rtt.getMaxValue()), resent);
        out.flush();
        return rtt.getTotalCount() == count;
    }

    static void awaitConnected(final BusPublication<?> publication, final long deadlineNs) {
        awaitConnected(publication, deadlineNs, null);
    }

    /** @param invoked an {@code INVOKER} bus whose duty cycles this thread runs while it waits, or null */
    static void awaitConnected(final BusPublication<?> publication, final long deadlineNs, final Bus invoked) {
        while (!publication.isConnected()) {
            if (System.nanoTime() > deadlineNs) {
                throw new BusException("no subscriber connected to topic '" + publication.topic().name() + "' in time: is the other end running?");
            }
            if (invoked == null || invoked.doWork() == 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(invoked == null ? 5 : 1));
            }
        }
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
}
