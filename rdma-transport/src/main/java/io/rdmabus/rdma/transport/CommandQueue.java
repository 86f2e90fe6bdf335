package io.rdmabus.rdma.transport;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The command queue that {@link PollerProxy} and {@link CmAgentProxy} are (each adds its agent's typed commands): any
 * number of producer threads, one consumer thread (the agent that owns it). It never drops a command silently and never blocks a producer.
 *
 * <p><b>Never drop, never deadlock.</b> A command goes into a bounded {@link ManyToOneConcurrentArrayQueue} (no
 * allocation beyond the command itself) while it has room; when it is full, the command goes into an unbounded
 * overflow queue instead and {@link #proxyFails()} counts it. A producer never waits, so the poller and the cm agent,
 * each a producer on the other's queue, cannot deadlock on two full queues (waiting for room, as Aeron's proxies do,
 * would: each agent would spin in an offer while its own queue fills). The price is memory while a consumer is stuck,
 * which the counter (and a log line at the 1st, 2nd, 4th, 8th... overflow) makes visible.
 *
 * <p><b>Order.</b> Commands of one producer run in the order it offered them. While the overflow holds a command,
 * producers add to the overflow too (behind it), and the consumer takes from the overflow only once the bounded queue
 * is empty (head = tail, so no command offered before is still in it). An offer that goes to the overflow because it
 * holds commands, not because the bounded queue is full, is counted as well: the counter is "commands that did not fit
 * the bounded queue in turn".
 *
 * <p><b>Closing.</b> After {@link #close()} (the consumer has stopped: the transport is closing) nothing runs any more:
 * the commands still queued and every later offer are discarded and counted in {@link #discarded()}. A producer that
 * offers while {@code close()} runs may leave its command in the queue uncounted; it is not run either.
 */
class CommandQueue {
    private static final Logger LOG = LoggerFactory.getLogger(CommandQueue.class);

    private final String name;
    private final ManyToOneConcurrentArrayQueue<Runnable> bounded;
    private final ConcurrentLinkedQueue<Runnable> overflow = new ConcurrentLinkedQueue<>();
    private final AtomicLong proxyFails = new AtomicLong();
    private final AtomicLong discarded = new AtomicLong();
    private volatile boolean closed;
    /** Ends the consumer's sleep once a command is queued (any thread); nothing unless {@link #wakeWith} set it. */
    private volatile Runnable wake = () -> { };

    CommandQueue(final String name, final int capacity) {
        this.name = name;
        this.bounded = new ManyToOneConcurrentArrayQueue<>(capacity);
    }

    /** Queues {@code command} for the consumer (any thread); never blocks, never drops (until {@link #close()}). */
    void offer(final Runnable command) {
        if (closed) {
            discarded.incrementAndGet();
            return;
        }
        if (overflow.isEmpty() && bounded.offer(command)) {
            wake.run();
            return;
        }
        overflow.add(command);
        wake.run();
        long n = proxyFails.incrementAndGet();
        if (Long.bitCount(n) == 1) {
            LOG.warn("{}: the command queue was full ({} commands); {} command(s) went to its overflow so far", name, bounded.capacity(), n);
        }
    }

    /**
     * Runs up to {@code limit} commands, in order, through {@code handler} (the consumer thread only).
     *
     * @return commands run
     */
    int drain(final Consumer<Runnable> handler, final int limit) {
        int n = 0;
        while (n < limit) {
            Runnable cmd = bounded.poll();
            if (cmd == null) {
                // the overflow's head was offered after everything in the bounded queue was claimed: only take it once
                // the bounded queue is empty (a producer that claimed a slot but has not filled it yet keeps it not empty)
                if (overflow.peek() == null || !bounded.isEmpty()) {
                    break;
                }
                cmd = overflow.poll();
            }
            handler.accept(cmd);
            n++;
        }
        return n;
    }

    /** @param waker ends the consumer's sleep (any thread): run after each command is queued */
    void wakeWith(final Runnable waker) {
        this.wake = waker;
    }

    /** @return whether commands wait (any thread, racy) */
    boolean hasCommands() {
        return !bounded.isEmpty() || !overflow.isEmpty();
    }

    /** @return commands that went to the overflow because the bounded queue was full (or the overflow in use) */
    long proxyFails() {
        return proxyFails.get();
    }

    /** @return commands discarded because the consumer had stopped for good */
    long discarded() {
        return discarded.get();
    }

    /** The consumer has stopped for good: discards (and counts) what waits and every later offer. */
    void close() {
        closed = true;
        long n = 0;
        while (bounded.poll() != null) {
            n++;
        }
        while (overflow.poll() != null) {
            n++;
        }
        discarded.addAndGet(n);
    }

    int capacity() {
        return bounded.capacity();
    }
}
