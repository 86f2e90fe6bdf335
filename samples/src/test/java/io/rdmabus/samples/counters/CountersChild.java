package io.rdmabus.samples.counters;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.BusStats;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.samples.support.LocalBuses;

import reactor.core.Disposable;

/**
 * The bus process of {@link CountersCrossProcessTest}: a publisher bus and a subscriber bus on the transport named by
 * {@code args[0]} (counters directory: {@code -Drdmabus.counters.dir}), {@code args[1]} messages on a reliable and a
 * best-effort topic. Once the traffic has stopped it prints each bus's {@code stats()} as {@code STATS} lines and
 * {@code READY}; then {@code close} on stdin closes the buses and prints {@code CLOSED}.
 */
public final class CountersChild {
    static final Topic<String> RELIABLE = Topic.of("counters.reliable", Codecs.utf8(), Delivery.RELIABLE);
    static final Topic<String> BEST_EFFORT = Topic.of("counters.best-effort", Codecs.utf8(), Delivery.BEST_EFFORT);

    private CountersChild() {
    }

    /** @param args transport, message count */
    public static void main(final String[] args) throws Exception {
        final String transport = args[0];
        final int count = Integer.parseInt(args[1]);
        try (LocalBuses buses = LocalBuses.create(transport, 2)) {
            final Bus sub = buses.newBus("child-sub");
            final Bus pub = buses.newBus("child-pub");
            final Disposable reliable = sub.subscribe(RELIABLE).subscribe();
            final Disposable bestEffort = sub.subscribe(BEST_EFFORT).subscribe();
            final Disposable inPlace = sub.subscribeInPlace(RELIABLE, (buffer, offset, length, header) -> { });
            try (BusPublication<String> r = pub.publication(RELIABLE); BusPublication<String> b = pub.publication(BEST_EFFORT)) {
                final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while ((!r.isConnected() || !b.isConnected()) && System.nanoTime() < deadlineNs) {
                    Thread.sleep(10);
                }
                for (int i = 0; i < count; i++) {
                    final String value = "message " + i;
                    while (r.offer(value) != PublishStatus.OK) {
                        Thread.onSpinWait();
                    }
                    b.offer(value); // best effort: a refusal is counted by the bus, not retried
                }
                while (delivered(sub, RELIABLE.name()) < 2L * count && System.nanoTime() < deadlineNs) { // copying and in place
                    Thread.sleep(10);
                }
                // the traffic has stopped once two snapshots 300 ms apart agree (best-effort frames may still be in flight)
                String before = "";
                String now = describe(sub, "child-sub") + describe(pub, "child-pub");
                for (int i = 0; i < 100 && !now.equals(before); i++) { // 30 s at most: the test then shows what still moved
                    Thread.sleep(300);
                    before = now;
                    now = describe(sub, "child-sub") + describe(pub, "child-pub");
                }
                System.out.print(now);
                System.out.println("READY");
                System.out.flush();
                final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                String line;
                while ((line = in.readLine()) != null && !"close".equals(line)) {
                    if ("close-sub".equals(line)) { // its connections close: the publisher's file frees their counters
                        sub.close();
                        System.out.print(describe(pub, "child-pub"));
                        System.out.println("SUB-CLOSED");
                        System.out.flush();
                    }
                }
            } finally {
                reliable.dispose();
                bestEffort.dispose();
                inPlace.dispose();
            }
        }
        System.out.println("CLOSED");
        System.out.flush();
    }

    private static long delivered(final Bus bus, final String topic) {
        return bus.stats().subscriptions().stream().filter(s -> s.topic().equals(topic)).mapToLong(SubscriptionStats::messagesDelivered)
            .sum();
    }

    /** One {@code STATS <bus> <scope>|<name>=<value>} line per counter, in the scopes and names of the counters file. */
    static String describe(final Bus bus, final String busName) {
        final BusStats stats = bus.stats();
        final StringBuilder out = new StringBuilder();
        final String busScope = "bus " + busName;
        line(out, busName, busScope, "messagesPublished", stats.messagesPublished());
        line(out, busName, busScope, "droppedNotConnected", stats.droppedNotConnected());
        for (final SubscriptionStats s : stats.subscriptions()) {
            final String scope = "subscription " + s.topic() + (s.ringCapacity() == 0 ? " (in place)" : ""); // in place: no ring
            for (final var e : List.of(
                java.util.Map.entry("framesReceived", s.framesReceived()), java.util.Map.entry("messagesDelivered", s.messagesDelivered()),
                java.util.Map.entry("malformedFrames", s.malformedFrames()), java.util.Map.entry("gapMessages", s.gapMessages()),
                java.util.Map.entry("droppedBySubscriber", s.droppedBySubscriber()), java.util.Map.entry("duplicates", s.duplicates()),
                java.util.Map.entry("ringCapacity", (long) s.ringCapacity()), java.util.Map.entry("ringFree", s.ringFree()))) {
                line(out, busName, scope, e.getKey(), e.getValue());
            }
        }
        stats.transportCounters().forEach((name, value) -> line(out, busName, "transport", name, value));
        for (final io.rdmabus.ConnectionStats c : stats.connections()) {
            c.counters().forEach((name, value) -> line(out, busName, "connection " + c.peer(), name, value));
        }
        return out.toString();
    }

    private static void line(final StringBuilder out, final String bus, final String scope, final String name, final long value) {
        out.append("STATS ").append(bus).append(' ').append(scope).append('|').append(name).append('=').append(value).append('\n');
    }
}
