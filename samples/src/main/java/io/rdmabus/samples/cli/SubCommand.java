package io.rdmabus.samples.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.rdmabus.Bus;
import io.rdmabus.Delivery;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import reactor.core.Disposable;

/** {@code rdma-bus sub}: prints the UTF-8 strings published to a topic (by {@code rdma-bus pub} in another process). */
@Command(name = "sub", mixinStandardHelpOptions = true, sortOptions = false, description = "Print the UTF-8 strings published to a topic.")
final class SubCommand implements Callable<Integer> {
    @Mixin
    TransportOptions transport;
    @Option(names = "--topic", required = true, description = "topic name")
    String topicName;
    @Option(names = "--delivery", defaultValue = "reliable", converter = Topics.class, description = "reliable or best-effort (default: reliable)")
    Delivery delivery;
    @Option(names = {"-n", "--count"}, defaultValue = "0", description = "stop after this many messages, 0 = no limit (default: ${DEFAULT-VALUE})")
    long count;
    @Option(names = {"-d", "--duration-s"}, defaultValue = "0", description = "stop after this long, 0 = until killed (default: ${DEFAULT-VALUE})")
    long durationS;
    @Option(names = {"-q", "--quiet"}, description = "do not print messages, only rates and bus counters each second")
    boolean quiet;
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    SubCommand() {
    }

    @Override
    public Integer call() throws InterruptedException {
        if (count < 0 || durationS < 0) {
            throw new IllegalArgumentException("need --count >= 0 and --duration-s >= 0");
        }
        final Topic<String> topic = Topic.of(topicName, Codecs.utf8(), delivery);
        final PrintWriter out = spec.commandLine().getOut();
        final AtomicLong received = new AtomicLong();
        final CountDownLatch done = new CountDownLatch(1);
        // Ctrl-C: stop waiting and let try-with-resources close the bus (its embedded driver removes its files)
        final CountDownLatch closed = new CountDownLatch(1);
        final Thread onExit = new Thread(() -> {
            done.countDown();
            try {
                closed.await(5, TimeUnit.SECONDS);
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }, "rdma-bus-sub-shutdown");
        Runtime.getRuntime().addShutdownHook(onExit);
        try (Bus bus = transport.buildBus("sub")) {
            out.println("transport: " + bus.transportName() + "; subscribed to " + topic.name() + " (" + delivery + ")");
            out.flush();
            final Disposable subscription = bus.subscribeReceived(topic, SubscribeOptions.defaults()).subscribe(r -> {
                if (!quiet) {
                    synchronized (out) {
                        out.printf("[session %08x seq %d%s] %s%n", r.sessionId(), r.sequence(), r.lostBefore() > 0 ? " lost " + r.lostBefore() : "",
                            r.value());
                        out.flush();
                    }
                }
                if (received.incrementAndGet() == count) {
                    done.countDown();
                }
            }, ex -> {
                out.println("subscription failed: " + ex.getMessage());
                done.countDown();
            }, done::countDown);
            final long endNs = durationS == 0 ? Long.MAX_VALUE : System.nanoTime() + TimeUnit.SECONDS.toNanos(durationS);
            final StatsPrinter stats = new StatsPrinter(bus);
            while (!done.await(1, TimeUnit.SECONDS) && System.nanoTime() < endNs) {
                if (quiet) {
                    synchronized (out) {
                        stats.print(out);
                        out.flush();
                    }
                }
            }
            subscription.dispose();
            out.printf("received %,d message(s)%n", received.get());
            out.flush();
            return 0;
        } finally {
            closed.countDown(); // the bus is closed by now (try-with-resources closes before finally)
            try {
                Runtime.getRuntime().removeShutdownHook(onExit);
            } catch (final IllegalStateException shuttingDown) {
                // the hook is running (Ctrl-C): it returns now that the bus is closed
            }
        }
    }
}
