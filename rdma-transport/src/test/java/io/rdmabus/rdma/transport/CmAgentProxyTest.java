package io.rdmabus.rdma.transport;

import static io.rdmabus.rdma.transport.PollerProxyTest.assertEachOnceInProducerOrder;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

/** The cm agent's command proxy: nothing dropped past its capacity, per-producer order, the drain limit (host only). */
class CmAgentProxyTest {
    private static final int PRODUCERS = 3;
    private static final int PER_PRODUCER = 700; // 2100 commands: past the capacity of 1024

    @Test
    void keepsEveryCommandPastCapacityAndCountsTheOverflow() throws InterruptedException {
        List<Integer> ran = new ArrayList<>();
        // producer p's onSubscribed(topic) carries p * 1_000_000 + seq as its topic id
        CmAgentProxy proxy = new CmAgentProxy("test", c -> { }, ran::add);
        CountDownLatch go = new CountDownLatch(1);
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
                for (int seq = 0; seq < PER_PRODUCER; seq++) {
                    if ((seq & 1) == 0) {
                        proxy.onSubscribed(producer * 1_000_000 + seq);
                    } else {
                        final int tag = producer * 1_000_000 + seq;
                        proxy.run(() -> ran.add(tag)); // the generic path, interleaved with the typed one
                    }
                }
            }));
        }
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(PRODUCERS * PER_PRODUCER - CmAgentProxy.CAPACITY, proxy.proxyFails());
        AtomicInteger handled = new AtomicInteger();
        Consumer<Runnable> handler = cmd -> {
            handled.incrementAndGet();
            cmd.run();
        };
        int n;
        int total = 0;
        while ((n = proxy.drain(handler)) > 0) {
            total += n;
            assertTrue(n == CmAgentProxy.COMMAND_LIMIT || total == PRODUCERS * PER_PRODUCER, "drain of " + n + " at " + total);
        }
        assertEquals(PRODUCERS * PER_PRODUCER, handled.get(), "every command went through the agent's handler");
        assertEachOnceInProducerOrder(ran, PRODUCERS, PER_PRODUCER);
    }

    @Test
    void twoAgentsOfferingToEachOtherNeverBlock() throws InterruptedException {
        // the poller and the cm agent are each a producer on the other's queue: with both queues full and each agent
        // offering to the other, neither may wait for room
        AtomicInteger destroyed = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        PollerProxy toPoller = new PollerProxy("test", 8, c -> failed.incrementAndGet(), c -> { });
        CmAgentProxy toCm = new CmAgentProxy("test", 8, c -> destroyed.incrementAndGet(), t -> { });
        Thread poller = Thread.ofPlatform().name("poller").start(() -> {
            for (int i = 0; i < 1000; i++) {
                toCm.destroy(null); // nobody drains yet
            }
        });
        Thread cm = Thread.ofPlatform().name("cm").start(() -> {
            for (int i = 0; i < 1000; i++) {
                toPoller.fail(null);
            }
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> !poller.isAlive() && !cm.isAlive());
        assertEquals(992, toCm.proxyFails());
        assertEquals(992, toPoller.proxyFails());
        while (toCm.drain(Runnable::run) > 0 || toPoller.drain() > 0) {
            // both drained in turns
        }
        assertEquals(1000, destroyed.get());
        assertEquals(1000, failed.get());
    }

    @Test
    void afterCloseCommandsAreDiscardedAndCounted() {
        AtomicInteger ran = new AtomicInteger();
        CmAgentProxy proxy = new CmAgentProxy("test", c -> ran.incrementAndGet(), t -> ran.incrementAndGet());
        proxy.destroy(null);
        proxy.onSubscribed(7);
        proxy.close();
        proxy.run(ran::incrementAndGet);
        assertEquals(3, proxy.discarded());
        assertEquals(0, proxy.drain(Runnable::run));
        assertEquals(0, ran.get());
        assertEquals(0, proxy.proxyFails());
    }
}
