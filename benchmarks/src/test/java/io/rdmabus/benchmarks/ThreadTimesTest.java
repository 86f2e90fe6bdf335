package io.rdmabus.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

/** {@link ThreadTimes} reads the kernel's figures for this JVM's threads (Linux). */
class ThreadTimesTest {
    @Test
    void countsTheCallingThreadsWakesAndCpuAndFindsThreadsByName() throws InterruptedException {
        final ThreadTimes before = ThreadTimes.self();
        for (int i = 0; i < 20; i++) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // each park ends in a wake: a voluntary switch
        }
        final long spinUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
        long spins = 0;
        while (System.nanoTime() < spinUntil) {
            spins++;
        }
        final ThreadTimes after = ThreadTimes.self();
        assertTrue(after.switches() - before.switches() >= 20, "20 parks, " + (after.switches() - before.switches()) + " switches");
        assertTrue(after.ticks() - before.ticks() >= 10, "200 ms on the CPU (" + spins + " spins), "
            + (after.ticks() - before.ticks()) + " ticks");

        final CountDownLatch running = new CountDownLatch(1);
        final Thread named = new Thread(() -> {
            running.countDown(); // its kernel name is set before run() begins
            LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(30));
        }, "times-test-thread-long-name");
        named.setDaemon(true);
        named.start();
        try {
            assertTrue(running.await(30, TimeUnit.SECONDS), "the thread started");
            assertEquals(1, ThreadTimes.take("times-test-thr").threads(), "matched by the kernel's 15-character name");
            assertEquals(0, ThreadTimes.take("no-such-thread").threads());
        } finally {
            LockSupport.unpark(named);
            named.join();
        }
    }
}
