package io.rdmabus.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.samples.support.LocalBuses;

import org.agrona.concurrent.IdleStrategy;

import reactor.core.Disposable;

/** Publisher cost per message with N subscriber buses on one reliable topic. */
final class FanOut {
    private FanOut() {
    }

    /**
     * @param publisherCpuNsPerMessage CPU time of the publishing thread per message
     * @param wallNsPerMessage         wall time from first send to the last subscriber's last receipt, per message
     * @param subscribers              subscriber buses
     * @param messages                 messages per subscriber, all received
     */
    record Result(int subscribers, int messages, double publisherCpuNsPerMessage, double wallNsPerMessage) {
    }

    /**
     * @param transport   transport name
     * @param subscribers subscriber buses (each its own bus, as separate processes would be)
     * @param messages    messages to publish
     * @param sizeBytes   payload size
     * @return the figures; every subscriber received every message (else it throws)
     */
    static Result run(final String transport, final int subscribers, final int messages, final int sizeBytes) {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final Topic<byte[]> topic = Topic.of("bench.fanout", Codecs.bytes(), Delivery.RELIABLE);
        try (LocalBuses buses = LocalBuses.create(transport, subscribers + 1)) {
            final Arrivals[] received = new Arrivals[subscribers];
            final List<Disposable> subs = new ArrayList<>();
            for (int s = 0; s < subscribers; s++) {
                final Arrivals arrivals = new Arrivals(Long.MAX_VALUE);
                received[s] = arrivals;
                subs.add(buses.newBus("fan-sub-" + s).subscribe(topic).subscribe(v -> arrivals.onMessage()));
            }
            final Bus publisherBus = buses.newBus("fan-pub");
            try (BusPublication<byte[]> pub = publisherBus.publication(topic)) {
                final long deadlineNs = System.nanoTime() + Load.TIMEOUT_NS;
                // isConnected means "at least one": also wait until every subscriber got a first message
                final byte[] payload = new byte[sizeBytes];
                while (!allAtLeast(received, 1)) {
                    Load.checkDeadline(deadlineNs, "fan-out subscribers to connect");
                    pub.offer(payload);
                    Thread.yield();
                }
                while (!pub.isConnected()) {
                    Load.checkDeadline(deadlineNs, "fan-out connection");
                }
                final long[] base = new long[subscribers];
                for (int s = 0; s < subscribers; s++) {
                    base[s] = received[s].count();
                    received[s].expect(base[s] + messages);
                }
                final IdleStrategy idle = Load.idle();
                final long cpuStartNs = threads.getCurrentThreadCpuTime();
                final long startNs = System.nanoTime();
                for (int i = 0; i < messages; i++) {
                    idle.reset();
                    while (pub.offer(payload) != PublishStatus.OK) {
                        Load.checkDeadline(deadlineNs, "fan-out back-pressure");
                        idle.idle();
                    }
                }
                final long cpuNs = threads.getCurrentThreadCpuTime() - cpuStartNs;
                long last = 0;
                for (int s = 0; s < subscribers; s++) {
                    while (received[s].count() - base[s] < messages) {
                        if (Load.pastDeadline(deadlineNs)) {
                            throw Load.timedOut("fan-out delivery to subscriber " + s);
                        }
                        Thread.yield();
                    }
                    last = Math.max(last, received[s].lastNs());
                }
                return new Result(subscribers, messages, cpuNs / (double) messages, (last - startNs) / (double) messages);
            } finally {
                subs.forEach(Disposable::dispose);
            }
        }
    }

    private static boolean allAtLeast(final Arrivals[] counts, final long min) {
        for (final Arrivals count : counts) {
            if (count.count() < min) {
                return false;
            }
        }
        return true;
    }
}
