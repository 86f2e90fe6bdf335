package io.rdmabus.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

import io.rdmabus.Bus;
import io.rdmabus.BusException;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.ThreadingMode;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.samples.support.LocalBuses;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import reactor.core.Disposable;

/**
 * The in-JVM hot path: publish -> frame -> (transport) -> header check, decode, ring -> {@code Flux} delivery to a
 * subscriber on another bus. One op = one reliable message taken by the publisher; reliable back-pressure keeps the
 * publisher from running ahead of the subscriber by more than the buffers, so ops/s is the delivered rate.
 * {@code transport=direct} hands frames straight to the receiving bus (bus cost only); {@code aeron-ipc} adds Aeron IPC
 * through one shared media driver. Run with {@code -prof gc} for bytes/op (all threads: publisher, driver, delivery).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"})
public class HotPathBenchmark {
    /** Messages per {@link #publishBatchAndDeliver()} call. */
    static final int BATCH = 16;
    /** The index of the subscriber's count in {@link #received}. */
    private static final int COUNT = 8;

    /** {@code direct} (no medium, bus only) or a transport name such as {@code aeron-ipc}. */
    @Param({"direct", "aeron-ipc"})
    public String transport;

    /** {@code copy}: {@code Bus.subscribe} (a {@code Flux} of decoded values); {@code in-place}: {@code Bus.subscribeInPlace}. */
    @Param({"copy", "in-place"})
    public String subscriber;

    /** The buses' threading mode. */
    @Param({"SHARED"})
    public String threading;

    /** Payload bytes per message. */
    @Param({"64", "1024"})
    public int sizeBytes;

    /** The buses' idle strategy ({@code IdleStrategies.NAMES}). */
    @Param({"backoff"})
    public String idle;

    /** {@code false}: the topic leaves the frames' wall-clock stamp out ({@code Topic.withoutTimestamps()}). */
    @Param({"true"})
    public boolean timestamps;

    private LocalBuses buses;
    private Bus publisherBus;
    private Bus subscriberBus;
    private BusPublication<byte[]> publication;
    private Disposable subscription;
    private byte[] payload;
    /** {@link #BATCH} references to {@link #payload}, for {@link #publishBatchAndDeliver()}. */
    private byte[][] batch;
    /**
     * Messages the subscriber got, written by the delivering thread on every message: element {@link #COUNT} of an
     * array with 64 bytes on either side of it, so it shares no cache line with anything the publishing thread touches
     * (a neighbour in the heap, placed by the collector's copying order, would move between the CPUs with it).
     */
    private final AtomicLongArray received = new AtomicLongArray(2 * COUNT + 1);
    /** Messages the publisher got OK for (publishing thread only). */
    private long offered;

    /** Starts two buses and a subscriber, waits until connected. */
    @Setup(Level.Trial)
    public void setUp() {
        final Topic<byte[]> stamped = Topic.of("bench.hotpath", Codecs.bytes(), Delivery.RELIABLE);
        final Topic<byte[]> topic = timestamps ? stamped : stamped.withoutTimestamps();
        if ("direct".equals(transport)) {
            final DirectTransport.Medium medium = new DirectTransport.Medium();
            final ThreadingMode mode = ThreadingMode.valueOf(threading);
            subscriberBus = Bus.builder().name("hot-sub").transport(new DirectTransport(medium)).threadingMode(mode)
                .idleStrategy(idle).build();
            publisherBus = Bus.builder().name("hot-pub").transport(new DirectTransport(medium)).threadingMode(mode)
                .idleStrategy(idle).build();
        } else {
            buses = LocalBuses.create(transport, 2, idle).threadingMode(ThreadingMode.valueOf(threading));
            subscriberBus = buses.newBus("hot-sub");
            publisherBus = buses.newBus("hot-pub");
        }
        // the subscriber's code reaches the count through a local, not through this object, whose fields the publishing
        // thread writes (offered) on every message
        final AtomicLongArray count = received;
        subscription = "in-place".equals(subscriber)
            ? subscriberBus.subscribeInPlace(topic, (buffer, offset, length, header) -> count.lazySet(COUNT, count.get(COUNT) + 1))
            : subscriberBus.subscribe(topic).subscribe(v -> count.lazySet(COUNT, count.get(COUNT) + 1));
        publication = publisherBus.publication(topic);
        payload = new byte[sizeBytes];
        batch = new byte[BATCH][];
        java.util.Arrays.fill(batch, payload);
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!publication.isConnected()) {
            if (System.nanoTime() > deadlineNs) {
                throw new BusException("benchmark publication did not connect on " + transport);
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    /** @return the status (always OK): one message published */
    @Benchmark
    public int publishAndDeliver() {
        int status;
        while ((status = publication.offer(payload)) != PublishStatus.OK) {
            if (status == PublishStatus.CLOSED) {
                throw new BusException("closed");
            }
            Thread.yield(); // 2 cores: let the delivery thread drain the ring
        }
        offered++;
        return status;
    }

    /**
     * {@link #BATCH} messages per call with {@code BusPublication.offer(values, offset, length)} (the publication's
     * ownership taken once per call); JMH's operations are messages.
     *
     * @return messages taken by the last offer
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int publishBatchAndDeliver() {
        int sent = 0;
        int taken = 0;
        while (sent < BATCH) {
            taken = publication.offer(batch, sent, BATCH - sent);
            if (taken > 0) {
                sent += taken;
            } else if (taken == PublishStatus.CLOSED) {
                throw new BusException("closed");
            } else {
                Thread.yield(); // 2 cores: let the delivery thread drain the ring
            }
        }
        offered += BATCH;
        return taken;
    }

    /** Checks nothing was lost, then closes everything. */
    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (received.get(COUNT) < offered && System.nanoTime() < deadlineNs) {
            Thread.sleep(1);
        }
        final long got = received.get(COUNT);
        subscription.dispose();
        publication.close();
        if (buses != null) {
            buses.close();
        } else {
            publisherBus.close();
            subscriberBus.close();
        }
        if (got != offered) {
            throw new IllegalStateException("reliable benchmark lost messages: offered " + offered + ", received " + got);
        }
    }
}
