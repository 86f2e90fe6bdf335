package io.rdmabus.benchmarks;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FragmentHandler;
import io.rdmabus.samples.support.SharedMediaDriver;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Plain Aeron IPC, no bus: one exclusive publication and one subscription per stream on the same kind of embedded
 * media driver as the bus's ({@link SharedMediaDriver}: shared threading, backoff idle, 1 MiB terms, 1408 MTU), a
 * receiver thread polling with the bus's default idle strategy. What the bus adds on top is the difference. With
 * {@code copies} the receiving code copies each message into a new {@code byte[]} (what a raw Aeron user who hands
 * messages on as {@code byte[]}, like the bus's copying {@code Flux}, writes); without, it reads the message in place.
 * With {@code pongPoller} a thread of its own polls the pong stream of a round trip and hands each pong to the pinging
 * thread, as a bus in {@code SHARED} or {@code DEDICATED} mode does (its agent receives, the application's thread waits);
 * without, the pinging thread polls the pong stream itself, as in {@code INVOKER} mode.
 */
final class RawAeronLoad implements Load {
    private static final String CHANNEL = "aeron:ipc?term-length=" + SharedMediaDriver.TERM_LENGTH_BYTES + "|mtu=" + SharedMediaDriver.MTU_BYTES;
    private final SharedMediaDriver driver;
    private final Aeron aeron;
    private final boolean copies;
    private final boolean stamps;
    private final boolean pongPoller;
    private int nextStreamId = 7000;
    /** The last copy a receiving thread made: kept (a plain store, racy on purpose) so the JIT cannot drop the copy. */
    @SuppressWarnings("unused")
    private byte[] lastCopy;

    /**
     * @param copies     the receiving code copies each message into a new {@code byte[]}
     * @param pongPoller a thread of its own polls the pongs and hands them to the pinging thread
     * @param stamps     each message carries {@link System#nanoTime()}: a one-way run's in its first 8 bytes, a ping's in the 8 after its sequence
     */
    RawAeronLoad(final boolean copies, final boolean pongPoller, final boolean stamps) {
        this.copies = copies;
        this.stamps = stamps;
        this.pongPoller = pongPoller;
        this.driver = SharedMediaDriver.launch("raw");
        this.aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(driver.directory()));
    }

    @Override
    public String label() {
        return "raw/aeron-ipc" + (copies ? " copy" : "") + (pongPoller ? " pong-poller" : "") + (stamps ? " stamped" : "");
    }

    /** A polling thread over a subscription, stopped by {@link #close()}. */
    private static final class Poller implements AutoCloseable {
        private final Thread thread;
        private volatile boolean running = true;

        Poller(final Subscription subscription, final FragmentHandler handler, final String name) {
            thread = new Thread(() -> {
                final IdleStrategy idle = Load.idle();
                while (running) {
                    idle.idle(subscription.poll(handler, 64));
                }
            }, name);
            thread.setDaemon(true);
            thread.start();
        }

        /** Only there to use the resource in its try block (javac's "never referenced" lint). */
        void started() {
            if (!thread.isAlive() && running) {
                throw new IllegalStateException(thread.getName() + " did not start");
            }
        }

        @Override
        public void close() {
            running = false;
            try {
                thread.join(5_000);
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public long oneWay(final int messages, final int sizeBytes) {
        final int streamId = nextStreamId++;
        final Arrivals received = new Arrivals(messages + 1L); // the priming message, then the timed ones
        try (Subscription sub = aeron.addSubscription(CHANNEL, streamId);
             ExclusivePublication pub = aeron.addExclusivePublication(CHANNEL, streamId);
             Poller poller = new Poller(sub, (buffer, offset, length, header) -> {
                 if (copies) {
                     copyOut(buffer, offset, length);
                 }
                 received.onMessage();
             }, "raw-aeron-receiver")) {
            poller.started();
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            while (!pub.isConnected()) {
                Load.checkDeadline(deadlineNs, "raw aeron connection");
                Thread.yield();
            }
            final BufferClaim claim = new BufferClaim();
            final UnsafeBuffer payload = new UnsafeBuffer(new byte[sizeBytes]);
            final IdleStrategy idle = Load.idle();
            Load.prime(label(), deadlineNs, () -> pub.offer(payload, 0, sizeBytes) > 0, received, () -> 0);
            final long startNs = System.nanoTime();
            for (int i = 0; i < messages; i++) {
                idle.reset();
                while (pub.tryClaim(sizeBytes, claim) < 0) { // back-pressured or admin action: retry, like the bus
                    Load.checkDeadline(deadlineNs, "raw aeron back-pressure");
                    idle.idle();
                }
                claim.buffer().putBytes(claim.offset(), payload, 0, sizeBytes);
                if (stamps) {
                    claim.buffer().putLong(claim.offset(), System.nanoTime());
                }
                claim.commit();
            }
            while (received.count() <= messages) {
                Load.checkDeadline(deadlineNs, "raw aeron delivery");
                Thread.yield();
            }
            return received.lastNs() - startNs;
        }
    }

    @Override
    public Histogram pingPong(final int pings, final int sizeBytes) {
        final int pingStream = nextStreamId++;
        final int pongStream = nextStreamId++;
        final int size = Math.max(8, sizeBytes);
        final AtomicLong lastSeq = new AtomicLong(-1);
        try (Subscription pingSub = aeron.addSubscription(CHANNEL, pingStream);
             ExclusivePublication pingPub = aeron.addExclusivePublication(CHANNEL, pingStream);
             Subscription pongSub = aeron.addSubscription(CHANNEL, pongStream);
             ExclusivePublication pongPub = aeron.addExclusivePublication(CHANNEL, pongStream)) {
            final IdleStrategy echoIdle = Load.idle();
            final UnsafeBuffer echoCopy = new UnsafeBuffer(0, 0); // the echo thread's view of its copy
            try (Poller echo = new Poller(pingSub, (buffer, offset, length, header) -> {
                echoIdle.reset();
                if (copies) {
                    echoCopy.wrap(copyOut(buffer, offset, length));
                    while (pongPub.offer(echoCopy, 0, length) < 0) {
                        echoIdle.idle();
                    }
                    return;
                }
                while (pongPub.offer(buffer, offset, length) < 0) {
                    echoIdle.idle();
                }
            }, "raw-aeron-echo")) {
                echo.started();
                final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
                while (!pingPub.isConnected() || !pongPub.isConnected()) {
                    Load.checkDeadline(deadlineNs, "raw aeron ping connection");
                    Thread.yield();
                }
                final FragmentHandler onPong = copies
                    ? (buffer, offset, length, header) -> lastSeq.lazySet(Load.getLong(copyOut(buffer, offset, length), 0))
                    : (buffer, offset, length, header) -> lastSeq.lazySet(buffer.getLong(offset));
                try (Poller pongs = pongPoller ? new Poller(pongSub, onPong, "raw-aeron-pong") : null) {
                    final UnsafeBuffer payload = new UnsafeBuffer(ByteBuffer.allocateDirect(size));
                    final Histogram rtt = new Histogram(3);
                    final IdleStrategy idle = Load.idle();
                    final int warmup = pings / 10;
                    for (int i = 0; i < warmup + pings; i++) {
                        payload.putLong(0, i);
                        if (stamps) {
                            payload.putLong(Long.BYTES, System.nanoTime());
                        }
                        final long startNs = System.nanoTime();
                        idle.reset();
                        while (pingPub.offer(payload, 0, size) < 0) {
                            Load.checkDeadline(deadlineNs, "raw aeron ping send");
                            idle.idle();
                        }
                        idle.reset();
                        while (lastSeq.get() != i) {
                            if (Load.pastDeadline(deadlineNs)) {
                                throw Load.timedOut("raw aeron pong " + i);
                            }
                            idle.idle(pongs == null ? pongSub.poll(onPong, 1) : 0); // else the poller thread hands it over
                        }
                        if (i >= warmup) {
                            rtt.recordValue(System.nanoTime() - startNs);
                        }
                    }
                    return rtt;
                }
            }
        }
    }

    private byte[] copyOut(final org.agrona.DirectBuffer buffer, final int offset, final int length) {
        final byte[] copy = new byte[length];
        buffer.getBytes(offset, copy);
        lastCopy = copy;
        return copy;
    }

    @Override
    public void close() {
        aeron.close();
        driver.close();
    }
}
