package io.rdmabus.rdma.transport;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/** The poller's command proxy: nothing dropped past its capacity, per-producer order, the drain limit (host only). */
class PollerProxyTest {
    private static final int PRODUCERS = 4;
    private static final int PER_PRODUCER = 1000; // 4000 commands: well past the capacity of 1024

    /** Producer {@code p}'s command {@code seq} appends {@code p * 1_000_000 + seq} (run by one thread at a time). */
    private static List<Thread> producers(final PollerProxy proxy, final int count, final List<Integer> ran, final CountDownLatch go) {
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < PRODUCERS; p++) {
            final int producer = p;
            threads.add(Thread.ofPlatform().name("producer-" + p).start(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                for (int seq = 0; seq < count; seq++) {
                    final int tag = producer * 1_000_000 + seq;
                    proxy.run(() -> ran.add(tag));
                }
            }));
        }
        return threads;
    }

    /** Every command of every producer ran exactly once, each producer's in the order it offered them. */
    static void assertEachOnceInProducerOrder(final List<Integer> ran, final int producers, final int perProducer) {
        assertEquals(producers * perProducer, ran.size(), "commands run");
        int[] next = new int[producers];
        for (int tag : ran) {
            int producer = tag / 1_000_000;
            int seq = tag % 1_000_000;
            assertEquals(next[producer], seq, "producer " + producer + ": command " + seq + " ran out of order or twice");
            next[producer]++;
        }
    }

    @Test
    void keepsEveryCommandPastCapacityAndCountsTheOverflow() throws InterruptedException {
        PollerProxy proxy = new PollerProxy("test", c -> { }, c -> { });
        List<Integer> ran = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = producers(proxy, PER_PRODUCER, ran, go);
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        // nothing consumed: exactly CAPACITY offers found room, every later one found the queue full
        assertEquals(PRODUCERS * PER_PRODUCER - PollerProxy.CAPACITY, proxy.proxyFails());
        assertTrue(proxy.hasCommands());
        int drains = 0;
        int n;
        while ((n = proxy.drain()) > 0) {
            drains++;
            if (ran.size() < PRODUCERS * PER_PRODUCER) {
                assertEquals(PollerProxy.COMMAND_LIMIT, n, "a drain short of the limit while commands waited");
            } else {
                assertTrue(n <= PollerProxy.COMMAND_LIMIT);
            }
        }
        assertEquals((PRODUCERS * PER_PRODUCER + PollerProxy.COMMAND_LIMIT - 1) / PollerProxy.COMMAND_LIMIT, drains);
        assertFalse(proxy.hasCommands());
        assertEachOnceInProducerOrder(ran, PRODUCERS, PER_PRODUCER);
        assertEquals(0, proxy.discarded());
    }

    @Test
    void keepsOrderWhileTheConsumerDrainsAcrossTheOverflow() throws InterruptedException {
        // a small queue, so producers and the consumer switch between it and the overflow many times
        PollerProxy proxy = new PollerProxy("test", 16, c -> { }, c -> { });
        List<Integer> ran = new ArrayList<>(); // the consumer thread writes, read after it stopped
        CountDownLatch go = new CountDownLatch(1);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger ranCount = new AtomicInteger();
        Thread consumer = Thread.ofPlatform().name("consumer").start(() -> {
            while (!stop.get()) {
                int n = proxy.drain();
                assertTrue(n <= PollerProxy.COMMAND_LIMIT);
                ranCount.set(ran.size());
                if (n == 0) {
                    Thread.onSpinWait();
                }
            }
        });
        int perProducer = 50_000;
        List<Thread> threads = producers(proxy, perProducer, ran, go);
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> ranCount.get() == PRODUCERS * perProducer);
        stop.set(true);
        consumer.join();
        assertFalse(proxy.hasCommands());
        assertEachOnceInProducerOrder(ran, PRODUCERS, perProducer);
    }

    @Test
    void typedCommandsReachTheirHandlers() {
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger added = new AtomicInteger();
        PollerProxy proxy = new PollerProxy("test", c -> failed.incrementAndGet(), c -> added.incrementAndGet());
        proxy.fail(null);
        proxy.addConnection(null);
        proxy.addConnection(null);
        assertEquals(0, failed.get() + added.get(), "nothing runs before the drain");
        assertEquals(3, proxy.drain());
        assertEquals(1, failed.get());
        assertEquals(2, added.get());
    }

    @Test
    void afterCloseCommandsAreDiscardedAndCounted() {
        AtomicInteger ran = new AtomicInteger();
        PollerProxy proxy = new PollerProxy("test", 4, c -> ran.incrementAndGet(), c -> ran.incrementAndGet());
        for (int i = 0; i < 6; i++) {
            proxy.run(ran::incrementAndGet);
        }
        assertEquals(2, proxy.proxyFails());
        proxy.close();
        assertEquals(6, proxy.discarded(), "4 queued + 2 in the overflow");
        proxy.fail(null);
        assertEquals(7, proxy.discarded());
        assertEquals(0, proxy.drain());
        assertEquals(0, ran.get());
    }
}
