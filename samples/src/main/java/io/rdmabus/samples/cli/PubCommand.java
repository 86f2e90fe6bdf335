package io.rdmabus.samples.cli;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.Bus;
import io.rdmabus.BusException;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code rdma-bus pub}: publishes UTF-8 strings (the arguments, or stdin lines) to a topic, for a subscriber in
 * another process ({@code rdma-bus sub}). With the default transport two processes on one host meet without settings
 * on aeron-udp (default endpoint 127.0.0.1:40456); for tcp give {@code -p tcp.bind=...} here and {@code --seed tcp=...}
 * there.
 */
@Command(name = "pub", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Publish UTF-8 strings (arguments, or stdin lines) to a topic.")
final class PubCommand implements Callable<Integer> {
    @Mixin
    TransportOptions transport;
    @Option(names = "--topic", required = true, description = "topic name")
    String topicName;
    @Option(names = "--delivery", defaultValue = "reliable", converter = Topics.class, description = "reliable or best-effort (default: reliable)")
    Delivery delivery;
    @Option(names = {"-n", "--repeat"}, defaultValue = "1", description = "publish the messages this many times (default: ${DEFAULT-VALUE})")
    long repeat;
    @Option(names = "--interval-ms", defaultValue = "0", description = "pause between messages (default: ${DEFAULT-VALUE})")
    long intervalMs;
    @Option(names = "--wait-s", defaultValue = "10", description = "how long to wait for a subscriber (default: ${DEFAULT-VALUE})")
    int waitS;
    @Parameters(arity = "0..*", paramLabel = "MESSAGE", description = "messages; none: read lines from stdin")
    List<String> messages = new ArrayList<>();
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    PubCommand() {
    }

    @Override
    public Integer call() throws Exception {
        if (repeat < 1 || intervalMs < 0 || waitS < 0) {
            throw new IllegalArgumentException("need --repeat >= 1, --interval-ms >= 0, --wait-s >= 0");
        }
        final Topic<String> topic = Topic.of(topicName, Codecs.utf8(), delivery);
        final PrintWriter out = spec.commandLine().getOut();
        try (Bus bus = transport.buildBus("pub"); BusPublication<String> publication = bus.publication(topic)) {
            out.println("transport: " + bus.transportName() + "; waiting up to " + waitS + " s for a subscriber of " + topic.name());
            out.flush();
            PingCommand.awaitConnected(publication, System.nanoTime() + TimeUnit.SECONDS.toNanos(waitS));
            long published = 0;
            long nextReportNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            for (long round = 0; round < repeat; round++) {
                if (messages.isEmpty()) {
                    final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                    String line;
                    while ((line = in.readLine()) != null) {
                        published += send(publication, line);
                    }
                    break; // stdin can be read once
                }
                for (final String message : messages) {
                    published += send(publication, message);
                    if (intervalMs > 0) {
                        Thread.sleep(intervalMs);
                    }
                    if (System.nanoTime() >= nextReportNs) {
                        nextReportNs += TimeUnit.SECONDS.toNanos(1);
                        out.printf("  published %,d%n", published);
                        out.flush();
                    }
                }
            }
            out.printf("published %,d message(s) to %s%n", published, topic.name());
            return 0;
        }
    }

    private static int send(final BusPublication<String> publication, final String message) {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int status;
        while ((status = publication.offer(message)) != PublishStatus.OK) {
            if (status == PublishStatus.CLOSED || status == PublishStatus.MESSAGE_TOO_LARGE || System.nanoTime() > deadlineNs) {
                throw new BusException("could not publish '" + abbreviate(message) + "': " + PublishStatus.describe(status));
            }
            if (status == PublishStatus.NOT_CONNECTED && publication.topic().delivery() == Delivery.BEST_EFFORT) {
                return 0; // best effort with nobody listening: dropped, as the topic promises
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50));
        }
        return 1;
    }

    private static String abbreviate(final String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }
}
