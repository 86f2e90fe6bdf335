package io.rdmabus.benchmarks;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.ThreadingMode;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.samples.support.LocalBuses;
import io.rdmabus.samples.support.Offers;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.IdleStrategy;

import reactor.core.Disposable;

/**
 * The bus over a transport: two buses in this JVM (publisher, subscriber), reliable {@code byte[]} topics. In
 * {@code INVOKER} mode the calling thread drives bus a (it publishes, and in a round trip receives the pong, in
 * {@link Bus#doWork()} calls while it waits) and a thread of this class drives bus b (it receives, and echoes), as raw
 * Aeron's pinger polls its own pong subscription and a receiver thread polls the other.
 */
final class BusLoad implements Load {
    private final LocalBuses buses;
    private final Bus a;
    private final Bus b;
    private final ThreadingMode threadingMode;
    private final boolean inPlace;
    /** Topics stamp frames with the publisher's clock (the default), else {@code Topic.withoutTimestamps()}. */
    private final boolean timestamps;
    /** Messages per offer call in one-way runs. */
    private final int batch;
    /** INVOKER: the thread that runs bus b's duty cycles; else null. */
    private final Thread driverOfB;
    private volatile boolean running = true;
    private int runs;

    /**
     * @param transport     the transport of both buses
     * @param threadingMode the buses' threading mode
     * @param inPlace       subscribers read in place ({@code Bus.subscribeInPlace}) instead of through a {@code Flux}
     * @param timestamps    false: the topics are {@code withoutTimestamps()}
     * @param batch         one-way runs offer this many messages per call ({@code BusPublication.offer(values, offset,
     *                      length)}); 1: one {@code offer(value)} per message
     */
    BusLoad(final String transport, final ThreadingMode threadingMode, final boolean inPlace, final boolean timestamps, final int batch) {
        if (batch < 1) {
            throw new IllegalArgumentException("batch must be at least 1, was " + batch);
        }
        this.batch = batch;
        this.threadingMode = threadingMode;
        this.inPlace = inPlace;
        this.timestamps = timestamps;
        this.buses = LocalBuses.create(transport, 2).threadingMode(threadingMode);
        try {
            this.a = buses.newBus("bench-a");
            this.b = buses.newBus("bench-b");
        } catch (final RuntimeException ex) {
            buses.close();
            throw ex;
        }
        if (threadingMode == ThreadingMode.INVOKER) {
            driverOfB = new Thread(() -> {
                final IdleStrategy idle = Load.idle();
                while (running) {
                    idle.idle(b.doWork());
                }
            }, "bench-b-invoker");
            driverOfB.setDaemon(true);
            driverOfB.start();
        } else {
            driverOfB = null;
        }
    }

    /** INVOKER: one duty cycle of bus a on this (the publishing) thread; else nothing. @return the work done */
    private int driveA() {
        return driverOfB != null ? a.doWork() : 0;
    }

    private Topic<byte[]> topic(final String name) {
        final Topic<byte[]> topic = Topic.of(name, Codecs.bytes(), Delivery.RELIABLE);
        return timestamps ? topic : topic.withoutTimestamps();
    }

    @Override
    public String label() {
        return "bus/" + buses.transport() + " " + threadingMode.name().toLowerCase(java.util.Locale.ROOT) + (inPlace ? " in-place" : "")
            + (timestamps ? "" : " no-timestamps");
    }

    @Override
    public long oneWay(final int messages, final int sizeBytes) {
        final Topic<byte[]> topic = topic("bench.oneway." + (runs++));
        final Arrivals received = new Arrivals(messages + 1L); // the priming message, then the timed ones
        final Disposable sub = inPlace
            ? b.subscribeInPlace(topic, (buffer, offset, length, header) -> received.onMessage())
            : b.subscribe(topic).subscribe(v -> received.onMessage());
        try (BusPublication<byte[]> pub = a.publication(topic)) {
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            while (!pub.isConnected()) {
                if (Load.pastDeadline(deadlineNs)) {
                    throw Load.timedOut(label() + " connection");
                }
                driveA();
                Thread.yield();
            }
            final byte[] payload = new byte[sizeBytes];
            final byte[][] values = new byte[batch][];
            java.util.Arrays.fill(values, payload);
            final IdleStrategy idle = Load.idle();
            Load.prime(label(), deadlineNs, () -> pub.offer(payload) == PublishStatus.OK, received, this::driveA);
            final long startNs = System.nanoTime();
            for (int sent = 0; sent < messages;) {
                final int asked = Math.min(batch, messages - sent);
                int taken;
                idle.reset();
                while ((taken = Offers.offer(pub, values, asked)) <= 0) {
                    if (taken == PublishStatus.CLOSED) {
                        throw new IllegalStateException(label() + ": publication closed");
                    }
                    if (Load.pastDeadline(deadlineNs)) {
                        throw Load.timedOut(label() + " back-pressure");
                    }
                    idle.idle(driveA());
                }
                sent += taken;
            }
            while (received.count() <= messages) {
                if (Load.pastDeadline(deadlineNs)) {
                    throw Load.timedOut(label() + " delivery (" + (received.count() - 1) + " of " + messages + ")");
                }
                driveA();
                Thread.yield();
            }
            return received.lastNs() - startNs;
        } finally {
            sub.dispose();
        }
    }

    @Override
    public Histogram pingPong(final int pings, final int sizeBytes) {
        final int run = runs++;
        final Topic<byte[]> ping = topic("bench.ping." + run);
        final Topic<byte[]> pong = topic("bench.pong." + run);
        final BusPublication<byte[]> pongPub = b.publication(pong);
        final IdleStrategy echoIdle = Load.idle();
        final Consumer<byte[]> echoValue = v -> {
            echoIdle.reset();
            while (pongPub.offer(v) == PublishStatus.BACK_PRESSURED) {
                echoIdle.idle();
            }
        };
        final AtomicLong lastSeq = new AtomicLong(-1);
        final Disposable echo;
        final Disposable back;
        if (inPlace) {
            final byte[] echoed = new byte[Math.max(8, sizeBytes)]; // the publication's codec takes a byte[]: one reused copy
            echo = b.subscribeInPlace(ping, (buffer, offset, length, header) -> {
                buffer.getBytes(offset, echoed, 0, Math.min(length, echoed.length));
                echoValue.accept(echoed);
            });
            back = a.subscribeInPlace(pong, (buffer, offset, length, header) -> lastSeq.lazySet(buffer.getLong(offset, java.nio.ByteOrder.LITTLE_ENDIAN)));
        } else {
            echo = b.subscribe(ping).subscribe(echoValue);
            back = a.subscribe(pong).subscribe(v -> lastSeq.lazySet(Load.getLong(v, 0)));
        }
        try (BusPublication<byte[]> pingPub = a.publication(ping)) {
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            while (!pingPub.isConnected() || !pongPub.isConnected()) {
                if (Load.pastDeadline(deadlineNs)) {
                    throw Load.timedOut(label() + " ping connection");
                }
                driveA();
                Thread.yield();
            }
            final byte[] payload = new byte[Math.max(8, sizeBytes)];
            final Histogram rtt = new Histogram(3);
            final IdleStrategy idle = Load.idle();
            final int warmup = pings / 10;
            for (int i = 0; i < warmup + pings; i++) {
                Load.putLong(payload, 0, i);
                final long startNs = System.nanoTime();
                idle.reset();
                while (pingPub.offer(payload) != PublishStatus.OK) {
                    if (Load.pastDeadline(deadlineNs)) {
                        throw Load.timedOut(label() + " ping send");
                    }
                    idle.idle(driveA());
                }
                idle.reset();
                while (lastSeq.get() != i) {
                    if (Load.pastDeadline(deadlineNs)) {
                        throw Load.timedOut(label() + " pong " + i);
                    }
                    idle.idle(driveA()); // INVOKER: the pong is received and delivered on this thread
                }
                if (i >= warmup) {
                    rtt.recordValue(System.nanoTime() - startNs);
                }
            }
            return rtt;
        } finally {
            back.dispose();
            echo.dispose();
            pongPub.close();
        }
    }

    @Override
    public void close() {
        running = false;
        if (driverOfB != null) {
            try {
                driverOfB.join(5_000);
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
        buses.close();
    }
}
