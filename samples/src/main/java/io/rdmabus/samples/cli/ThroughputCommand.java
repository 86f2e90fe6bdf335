package io.rdmabus.samples.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.rdmabus.Bus;
import io.rdmabus.BusException;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.ThreadingMode;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.samples.support.LocalBuses;
import io.rdmabus.samples.support.Offers;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import reactor.core.Disposable;

/**
 * {@code rdma-bus throughput}: one publisher bus streams fixed-size messages as fast as the topic takes them to one
 * subscriber bus in this process; prints msg/s and MB/s per second and per message size.
 */
@Command(name = "throughput", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Messages/s and MB/s through the bus by message size (two buses in this process).")
final class ThroughputCommand implements Callable<Integer> {
    @Mixin
    TransportOptions transport;
    @Option(names = {"-s", "--sizes"}, split = ",", defaultValue = "64,1024", description = "message sizes in bytes (default: ${DEFAULT-VALUE})")
    List<Integer> sizes;
    @Option(names = {"-d", "--duration-s"}, defaultValue = "3", description = "seconds per size (default: ${DEFAULT-VALUE})")
    double durationS;
    @Option(names = "--batch", defaultValue = "1",
        description = "messages per offer; above 1 the publisher uses the batch offer BusPublication.offer(values, offset, length) (default: ${DEFAULT-VALUE})")
    int batch;
    @Option(names = "--delivery", defaultValue = "reliable", converter = Topics.class,
        description = "reliable (nothing lost, publisher slowed) or best-effort (loss counted) (default: reliable)")
    Delivery delivery;
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    ThroughputCommand() {
    }

    /**
     * @param sizeBytes   message size
     * @param sent        messages taken by the publisher
     * @param received    messages received
     * @param seconds     measured time, from first send to last receipt (or the end of the drain)
     */
    record Result(int sizeBytes, long sent, long received, double seconds) {
        double messagesPerSecond() {
            return received / seconds;
        }

        double megabytesPerSecond() {
            return received * (double) sizeBytes / seconds / 1e6;
        }
    }

    @Override
    public Integer call() throws InterruptedException {
        if (durationS <= 0 || batch < 1 || sizes.isEmpty() || sizes.stream().anyMatch(s -> s < 1 || s > Topic.DEFAULT_MAX_MESSAGE_LENGTH)) {
            throw new IllegalArgumentException("need --duration-s > 0, --batch >= 1 and --sizes in 1.." + Topic.DEFAULT_MAX_MESSAGE_LENGTH);
        }
        if (transport.crossProcess()) {
            throw new IllegalArgumentException("throughput runs both ends in this process: -p/--seed are not used");
        }
        // flags, then outside code, then the defaults; a bad --threading or an undriven invoker fails here, before anything starts
        final TransportOptions.InProcess settings = transport.inProcess();
        final ThreadingMode threading = settings.threadingMode();
        final PrintWriter out = spec.commandLine().getOut();
        boolean ok = true;
        try (LocalBuses buses = LocalBuses.create(settings.transport(), 2, settings.idleStrategy()).threadingMode(threading)) {
            out.println("transport: " + buses.describe() + ", " + delivery + ", " + threading + " threading, "
                + settings.idleStrategy() + " idle" + (batch == 1 ? "" : ", batch offers of " + batch));
            final Bus subscriberBus = buses.newBus("tput-sub");
            final Bus publisherBus = buses.newBus("tput-pub");
            for (final int size : sizes) {
                final Result r = run(publisherBus, subscriberBus, size, out);
                out.printf("size %6d B: %,12d msgs in %.2f s = %,12.0f msg/s %9.1f MB/s  (sent %,d, lost %,d)%n", r.sizeBytes(), r.received(),
                    r.seconds(), r.messagesPerSecond(), r.megabytesPerSecond(), r.sent(), r.sent() - r.received());
                out.flush();
                ok &= delivery == Delivery.BEST_EFFORT || r.sent() == r.received();
            }
        }
        return ok ? 0 : 1;
    }

    private Result run(final Bus publisherBus, final Bus subscriberBus, final int size, final PrintWriter out) {
        final Topic<byte[]> topic = Topic.of("rdmabus.throughput." + size, Codecs.bytes(), delivery);
        final AtomicLong received = new AtomicLong();
        final AtomicLong lastReceiptNs = new AtomicLong();
        final Disposable subscription = subscriberBus.subscribe(topic).subscribe(v -> {
            received.lazySet(received.get() + 1);
            lastReceiptNs.lazySet(System.nanoTime());
        });
        try (BusPublication<byte[]> publication = publisherBus.publication(topic)) {
            PingCommand.awaitConnected(publication, System.nanoTime() + TimeUnit.SECONDS.toNanos(15));
            final byte[] payload = new byte[size];
            final byte[][] payloads = new byte[batch][];
            java.util.Arrays.fill(payloads, payload); // the codec copies each value into its frame
            final IdleStrategy idle = new BackoffIdleStrategy(10, 20, 1_000, 100_000);
            final long startNs = System.nanoTime();
            final long endNs = startNs + (long) (durationS * 1e9);
            long nextReportNs = startNs + TimeUnit.SECONDS.toNanos(1);
            long sent = 0;
            long lastSent = 0;
            long lastReceived = 0;
            long nowNs;
            while ((nowNs = System.nanoTime()) < endNs) {
                final int status = Offers.offer(publication, payloads, batch); // messages taken (> 0) or a refusal's code
                if (status > 0) {
                    sent += status;
                    idle.reset();
                } else if (status == PublishStatus.CLOSED || status == PublishStatus.MESSAGE_TOO_LARGE) {
                    throw new BusException("publishing failed: " + PublishStatus.describe(status));
                } else {
                    idle.idle(); // back-pressured (or best effort with no room): let the subscriber catch up
                }
                if (nowNs >= nextReportNs) {
                    nextReportNs += TimeUnit.SECONDS.toNanos(1);
                    final long r = received.get();
                    out.printf("  size %d B: sent %,d msg/s, received %,d msg/s (%.1f MB/s)%n", size, sent - lastSent, r - lastReceived,
                        (r - lastReceived) * (double) size / 1e6);
                    out.flush();
                    lastSent = sent;
                    lastReceived = r;
                }
            }
            // drain: reliable messages still in flight are part of the run
            final long drainEndNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(delivery == Delivery.RELIABLE ? 10 : 1);
            while (received.get() < sent && System.nanoTime() < drainEndNs) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            final long last = Math.max(lastReceiptNs.get(), endNs);
            return new Result(size, sent, received.get(), (last - startNs) / 1e9);
        } finally {
            subscription.dispose();
        }
    }
}
