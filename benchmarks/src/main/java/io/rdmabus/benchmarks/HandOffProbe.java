package io.rdmabus.benchmarks;

import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.lmax.disruptor.EventPoller;
import com.lmax.disruptor.InsufficientCapacityException;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.YieldingWaitStrategy;

import io.rdmabus.samples.cli.CliSupport;

import org.agrona.concurrent.UnsafeBuffer;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The bare thread hand-off under {@code HotPathBenchmark}'s copying row, with no bus code: one thread copies each message
 * into a slot of a single-producer Disruptor ring (yielding when it is full, as the benchmark's publisher does), another
 * drains it with an {@link EventPoller}, spinning when it is empty. Prints the messages moved in each second, so what the
 * machine itself does to a two-thread exchange (cores, their placement, other load) shows beside the bus's figures: run it
 * just before and after {@code HotPathBenchmark}.
 */
@Command(name = "hand-off-probe", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Moves messages between two threads through a bare Disruptor ring and prints M msg/s per second.")
public final class HandOffProbe implements Callable<Integer> {
    @Option(names = "--seconds", defaultValue = "10", description = "seconds to run, one figure each (default: ${DEFAULT-VALUE})")
    int seconds;

    @Option(names = "--size", defaultValue = "64", description = "bytes copied per message (default: ${DEFAULT-VALUE})")
    int size;

    @Option(names = "--ring", defaultValue = "1024", description = "ring slots, a power of two (default: ${DEFAULT-VALUE})")
    int ringSize;

    /** One slot: a copy of the message. */
    private static final class Slot {
        final UnsafeBuffer payload;
        int length;

        Slot(final int size) {
            payload = new UnsafeBuffer(new byte[size]);
        }
    }

    private volatile boolean running = true;
    private double[] perSecond = new double[0];

    /** @return M msg/s moved in each second of the last run */
    double[] perSecond() {
        return perSecond.clone();
    }

    public static void main(final String[] args) {
        System.exit(CliSupport.commandLine(new HandOffProbe()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (seconds < 1 || size < 1 || Integer.bitCount(ringSize) != 1) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--seconds and --size must be positive, --ring a power of two");
        }
        final RingBuffer<Slot> ring = RingBuffer.createSingleProducer(() -> new Slot(size), ringSize, new YieldingWaitStrategy());
        final EventPoller<Slot> poller = ring.newPoller();
        ring.addGatingSequences(poller.getSequence());
        final AtomicLong consumed = new AtomicLong();
        final long[] checksum = new long[1];
        final EventPoller.Handler<Slot> handler = (slot, sequence, endOfBatch) -> {
            checksum[0] += slot.payload.getByte(slot.length - 1);
            consumed.lazySet(consumed.get() + 1);
            return true;
        };
        final Thread consumer = Thread.ofPlatform().name("hand-off-consumer").start(() -> {
            while (running) {
                try {
                    if (poller.poll(handler) != EventPoller.PollState.PROCESSING) {
                        Thread.onSpinWait();
                    }
                } catch (final Exception ex) {
                    throw new IllegalStateException(ex);
                }
            }
        });
        final UnsafeBuffer message = new UnsafeBuffer(new byte[size]);
        final Thread producer = Thread.ofPlatform().name("hand-off-producer").start(() -> {
            while (running) {
                try {
                    final long seq = ring.tryNext();
                    final Slot slot = ring.get(seq);
                    slot.payload.putBytes(0, message, 0, size);
                    slot.length = size;
                    ring.publish(seq);
                } catch (final InsufficientCapacityException full) {
                    Thread.yield();
                }
            }
        });
        perSecond = new double[seconds];
        long last = consumed.get();
        for (int i = 0; i < seconds; i++) {
            TimeUnit.SECONDS.sleep(1);
            final long now = consumed.get();
            perSecond[i] = (now - last) / 1e6;
            last = now;
            System.out.printf("second %d: %.2fM msg/s%n", i + 1, perSecond[i]);
        }
        running = false;
        producer.join();
        consumer.join();
        final double[] sorted = perSecond.clone();
        Arrays.sort(sorted);
        System.out.printf("hand-off: median %.2fM msg/s, min %.2fM, max %.2fM over %d s (%d B, ring %d)%n",
            sorted[seconds / 2], sorted[0], sorted[seconds - 1], seconds, size, ringSize);
        return checksum[0] == Long.MIN_VALUE ? 1 : 0; // keeps the consumer's reads alive
    }
}
