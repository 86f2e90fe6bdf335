package io.rdmabus.samples.cli;

import java.io.PrintWriter;
import java.util.HashMap;
import java.util.Map;

import io.rdmabus.Bus;
import io.rdmabus.BusStats;
import io.rdmabus.SubscriptionStats;

/** Prints a bus's counters ({@link Bus#stats()}) with per-second rates since the previous call. */
public final class StatsPrinter {
    private final Bus bus;
    private final Map<String, SubscriptionStats> previous = new HashMap<>();
    private long previousPublished;
    private long previousNs = System.nanoTime();

    /** @param bus the bus to watch (in this process) */
    public StatsPrinter(final Bus bus) {
        this.bus = bus;
    }

    /** @param out where to print one block of lines */
    public void print(final PrintWriter out) {
        final BusStats stats = bus.stats();
        final long nowNs = System.nanoTime();
        final double seconds = Math.max(1e-9, (nowNs - previousNs) / 1e9);
        out.printf("bus %s: published %,d (%,.0f/s), best-effort dropped with no subscriber %,d%n", stats.transport(),
            stats.messagesPublished(), (stats.messagesPublished() - previousPublished) / seconds, stats.droppedNotConnected());
        for (final SubscriptionStats s : stats.subscriptions()) {
            final SubscriptionStats before = previous.get(s.topic());
            final long delivered = s.messagesDelivered() - (before == null ? 0 : before.messagesDelivered());
            out.printf("  %-28s %,10.0f msg/s  delivered %,d  frames %,d  gaps %,d  dropped %,d  duplicates %,d  malformed %,d"
                    + "  ring %,d/%,d used (credits %,d)%n", s.topic(), delivered / seconds, s.messagesDelivered(), s.framesReceived(),
                s.gapMessages(), s.droppedBySubscriber(), s.duplicates(), s.malformedFrames(), s.ringCapacity() - s.ringFree(),
                s.ringCapacity(), s.ringFree());
            previous.put(s.topic(), s);
        }
        final StringBuilder transport = new StringBuilder();
        stats.transportCounters().forEach((name, value) -> {
            if (value != 0) {
                transport.append(transport.isEmpty() ? "" : ", ").append(name).append(' ').append(String.format("%,d", value));
            }
        });
        if (!transport.isEmpty()) {
            out.printf("  transport %s: %s%n", stats.transport(), transport);
        }
        previousPublished = stats.messagesPublished();
        previousNs = nowNs;
    }
}
