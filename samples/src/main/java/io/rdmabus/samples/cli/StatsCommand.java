package io.rdmabus.samples.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.samples.support.LocalBuses;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import reactor.core.Disposable;
import reactor.core.Disposables;

/**
 * {@code rdma-bus stats}: the counters of a running bus ({@link Bus#stats()}): per-topic rates, gaps, drops. Bus
 * counters are in-process only for now, so this command starts a bus pair in this process with a steady load (a
 * reliable and a best-effort topic) and watches it; {@code --pid} (another process) is refused with an explanation.
 */
@Command(name = "stats", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Per-topic rates, gaps and drops of a running bus in this process (with a generated load).")
final class StatsCommand implements Callable<Integer> {
    @Mixin
    TransportOptions transport;
    @Option(names = "--pid", description = "a bus in another process: not supported yet")
    Long pid;
    @Option(names = {"-d", "--duration-s"}, defaultValue = "5", description = "how long to run (default: ${DEFAULT-VALUE})")
    int durationS;
    @Option(names = "--rate", defaultValue = "10000", description = "messages per second on each topic (default: ${DEFAULT-VALUE})")
    int rate;
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    StatsCommand() {
    }

    @Override
    public Integer call() throws InterruptedException {
        final PrintWriter out = spec.commandLine().getOut();
        if (pid != null) {
            spec.commandLine().getErr().println("stats of another process is not supported yet: bus counters are only readable in the bus's own "
                + "process (Bus.stats()); run 'rdma-bus sub --quiet' there to see them");
            return CliSupport.EXIT_FAILED;
        }
        if (durationS < 1 || rate < 1) {
            throw new IllegalArgumentException("need --duration-s >= 1 and --rate >= 1");
        }
        final Topic<byte[]> reliable = Topic.of("rdmabus.stats.reliable", Codecs.bytes(), Delivery.RELIABLE);
        final Topic<byte[]> bestEffort = Topic.of("rdmabus.stats.best-effort", Codecs.bytes(), Delivery.BEST_EFFORT);
        try (LocalBuses buses = LocalBuses.create(transport.transport(), 2, transport.idleStrategy())) {
            final Bus subscriberBus = buses.newBus("stats-sub");
            final Bus publisherBus = buses.newBus("stats-pub");
            out.println("transport: " + buses.transport() + "; load: " + rate + " msg/s on " + reliable.name() + " and " + bestEffort.name());
            final Disposable.Composite subs = Disposables.composite(subscriberBus.subscribe(reliable).subscribe(),
                subscriberBus.subscribe(bestEffort).subscribe());
            try (BusPublication<byte[]> r = publisherBus.publication(reliable); BusPublication<byte[]> b = publisherBus.publication(bestEffort)) {
                PingCommand.awaitConnected(r, System.nanoTime() + TimeUnit.SECONDS.toNanos(15));
                final StatsPrinter subscriberStats = new StatsPrinter(subscriberBus);
                final StatsPrinter publisherStats = new StatsPrinter(publisherBus);
                final byte[] payload = new byte[64];
                final long startNs = System.nanoTime();
                final long endNs = startNs + TimeUnit.SECONDS.toNanos(durationS);
                long nextReportNs = startNs + TimeUnit.SECONDS.toNanos(1);
                long sent = 0;
                long nowNs;
                while ((nowNs = System.nanoTime()) < endNs) {
                    final long due = (long) ((nowNs - startNs) * (rate / 1e9));
                    while (sent < due) {
                        r.offer(payload); // a refused message is simply not counted as published: the stats show it
                        b.offer(payload);
                        sent++;
                    }
                    if (nowNs >= nextReportNs) {
                        nextReportNs += TimeUnit.SECONDS.toNanos(1);
                        out.printf("[%ds] publisher ", TimeUnit.NANOSECONDS.toSeconds(nowNs - startNs));
                        publisherStats.print(out);
                        out.printf("[%ds] subscriber ", TimeUnit.NANOSECONDS.toSeconds(nowNs - startNs));
                        subscriberStats.print(out);
                        out.flush();
                    }
                    LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
                }
            } finally {
                subs.dispose();
            }
        }
        return 0;
    }
}
