package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.rdmabus.spi.AgentThreads;
import io.rdmabus.spi.DedicatedAgentHost;
import io.rdmabus.spi.HostedAgent;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

class SharedAgentTest {
    /** Counts its duty cycles and records where its lifecycle calls ran. */
    private static final class Probe implements Agent {
        final AtomicInteger cycles = new AtomicInteger();
        final List<String> events = new CopyOnWriteArrayList<>();
        volatile Thread cycleThread;
        final AtomicInteger concurrent = new AtomicInteger();
        volatile boolean overlapped;

        @Override
        public void onStart() {
            events.add("start");
        }

        @Override
        public int doWork() {
            if (concurrent.incrementAndGet() > 1) {
                overlapped = true;
            }
            cycleThread = Thread.currentThread();
            cycles.incrementAndGet();
            concurrent.decrementAndGet();
            return 0;
        }

        @Override
        public void onClose() {
            events.add("close");
        }

        @Override
        public String roleName() {
            return "probe";
        }
    }

    private final List<Throwable> errors = new CopyOnWriteArrayList<>();

    @Test
    void sharedThreadRunsEveryHostedAgentAndCloseWaitsForOnClose() {
        final SharedAgent shared = new SharedAgent("rdma-bus-shared-test", false, errors::add, null);
        assertFalse(shared.dedicatesThreads(), "a transport must not give a shared thread an agent that sleeps");
        assertTrue(new DedicatedAgentHost(BackoffIdleStrategy::new, errors::add).dedicatesThreads());
        final AgentRunner runner = new AgentRunner(new BackoffIdleStrategy(), errors::add, null, shared);
        AgentThreads.start(runner);
        final Probe a = new Probe();
        final Probe b = new Probe();
        final HostedAgent ha = shared.host(a);
        final HostedAgent hb = shared.host(b);
        Awaitility.await("both agents cycling").atMost(Duration.ofSeconds(10)).until(() -> a.cycles.get() > 10 && b.cycles.get() > 10);
        assertEquals(a.cycleThread, b.cycleThread, "one thread runs both");
        assertTrue(ha.onAgentThread() == (Thread.currentThread() == runner.thread()));

        ha.close();

        assertEquals(List.of("start", "close"), a.events, "close returns after onClose ran");
        assertTrue(ha.isClosed());
        final int after = a.cycles.get();
        Awaitility.await("the other agent still cycles").atMost(Duration.ofSeconds(10)).until(() -> b.cycles.get() > after + 10);
        assertEquals(after, a.cycles.get(), "a closed agent ran again");
        runner.close();
        assertEquals(List.of("start", "close"), b.events, "the shared thread's end closes what is still hosted");
        assertTrue(hb.isClosed());
        assertTrue(errors.isEmpty(), errors.toString());
    }

    @Test
    void invokerRunsCyclesOnCallersOneAtATimeAndAWaiterRunsThemItself() throws InterruptedException {
        final SharedAgent shared = new SharedAgent("rdma-bus-invoker-test", true, errors::add, null);
        final Probe probe = new Probe();
        final HostedAgent hosted = shared.host(probe);
        assertEquals(0, probe.cycles.get(), "nothing runs before the application calls doWork");
        final Thread[] loops = new Thread[3];
        for (int i = 0; i < loops.length; i++) {
            loops[i] = new Thread(() -> {
                for (int n = 0; n < 20_000; n++) {
                    shared.doWork();
                }
            });
            loops[i].start();
        }
        for (final Thread loop : loops) {
            loop.join();
        }
        assertTrue(probe.cycles.get() > 0);
        assertFalse(probe.overlapped, "two threads were inside a duty cycle at once");

        hosted.close(); // nobody calls doWork any more: the closing thread runs the cycle that closes it

        assertEquals(List.of("start", "close"), probe.events);
        shared.onClose();
        assertEquals(0, shared.doWork(), "a closed invoker does nothing");
        assertTrue(errors.isEmpty(), errors.toString());
    }

    @Test
    void anAgentThatThrowsIsReportedAndTheOthersKeepRunning() {
        final SharedAgent shared = new SharedAgent("rdma-bus-invoker-test", true, errors::add, null);
        final Probe probe = new Probe();
        shared.host(new Agent() {
            @Override
            public int doWork() {
                throw new IllegalStateException("expected by the test");
            }

            @Override
            public String roleName() {
                return "thrower";
            }
        });
        shared.host(probe);
        for (int i = 0; i < 5; i++) {
            shared.doWork();
        }
        assertEquals(5, probe.cycles.get(), "the agent after the thrower ran every cycle");
        assertEquals(5, errors.size(), "each exception reported: " + errors);
        shared.onClose();
    }
}
