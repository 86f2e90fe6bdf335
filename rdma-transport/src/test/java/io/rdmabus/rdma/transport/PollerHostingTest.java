package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.TransportException;
import io.rdmabus.spi.HostedAgent;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.junit.jupiter.api.Test;

/**
 * A command run on the poller and waited for ({@link PollerProxy#runAndWait}) wherever the poller runs: on its own
 * thread ({@link io.rdmabus.spi.DedicatedAgentHost#start}, {@code DEDICATED}), in the caller's own duty cycle, or hosted in an {@code INVOKER}
 * bus's cycle that no application loop drives (the waiter runs it). Nothing is dropped and no wait is unbounded (host only).
 */
class PollerHostingTest {
    /** The poller's part that matters here: it runs the proxy's commands in its duty cycle. */
    private static Agent draining(final PollerProxy proxy) {
        return new Agent() {
            @Override
            public int doWork() {
                return proxy.drain();
            }

            @Override
            public String roleName() {
                return "test-poller";
            }
        };
    }

    /**
     * Hosted as an {@code INVOKER} bus hosts it: nothing runs its cycle unless a thread calls {@link #doWork()} or waits
     * through {@link #idleWhileWaiting()} (which runs one cycle on the waiter, as the bus's shared agent does).
     */
    private static final class InvokerHosted implements HostedAgent {
        final IntSupplier cycle;
        volatile Thread cycleThread;
        volatile boolean closed;

        InvokerHosted(final IntSupplier cycle) {
            this.cycle = cycle;
        }

        int doWork() {
            cycleThread = Thread.currentThread();
            try {
                return cycle.getAsInt();
            } finally {
                cycleThread = null;
            }
        }

        @Override
        public boolean isClosed() {
            return closed;
        }

        @Override
        public boolean onAgentThread() {
            return cycleThread == Thread.currentThread();
        }

        @Override
        public void idleWhileWaiting() {
            if (doWork() == 0) {
                LockSupport.parkNanos(50_000);
            }
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    @Test
    void anInvokerPollerThatNoLoopDrivesRunsTheCommandOnTheWaiter() {
        PollerProxy proxy = new PollerProxy("test", c -> { }, c -> { });
        InvokerHosted host = new InvokerHosted(proxy::drain);
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        proxy.runAndWait(host, () -> ranOn.set(Thread.currentThread()), 3000);
        assertSame(Thread.currentThread(), ranOn.get(), "the waiting thread ran the poller's cycle, and the command in it");
        assertFalse(proxy.hasCommands(), "nothing left queued");
    }

    @Test
    void onThePollersThreadTheCommandRunsAtOnce() {
        PollerProxy proxy = new PollerProxy("test", c -> { }, c -> { });
        AtomicReference<InvokerHosted> self = new AtomicReference<>();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        // a sink calling in from the duty cycle (e.g. a subscriber that cancels on delivery): waiting would deadlock
        InvokerHosted host = new InvokerHosted(() -> {
            if (ranOn.get() == null) {
                proxy.runAndWait(self.get(), () -> ranOn.set(Thread.currentThread()), 3000);
            }
            return 1;
        });
        self.set(host);
        host.doWork();
        assertSame(Thread.currentThread(), ranOn.get(), "run inside the cycle");
        assertFalse(proxy.hasCommands(), "not queued for a later cycle");
    }

    @Test
    void aClosedPollerEndsTheWaitAndItsCommandIsDiscardedAndCounted() {
        PollerProxy proxy = new PollerProxy("test", c -> { }, c -> { });
        InvokerHosted host = new InvokerHosted(() -> 0); // a poller that never gets to the command
        Thread closer = Thread.ofPlatform().start(() -> {
            LockSupport.parkNanos(20_000_000);
            host.close();
        });
        proxy.runAndWait(host, () -> { throw new AssertionError("a closed poller ran a command"); }, 60_000);
        assertTrue(host.isClosed(), "the wait ended because the poller closed");
        proxy.close(); // the transport's close: the command still queued is discarded, counted
        assertEquals(1, proxy.discarded(), "the command the closed poller never ran is counted");
        proxy.runAndWait(host, () -> { throw new AssertionError("a closed poller ran a command"); }, 60_000);
        try {
            closer.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aRunningPollerThatNeverRunsTheCommandFailsTheWaitNamingTheBound() {
        PollerProxy proxy = new PollerProxy("test", c -> { }, c -> { });
        InvokerHosted host = new InvokerHosted(() -> 0);
        TransportException e = assertThrows(TransportException.class, () -> proxy.runAndWait(host, () -> { }, 50));
        assertEquals("the rdma poller did not run a command within 50 ms (rdma.command.timeout.ms); the command was withdrawn",
            e.getMessage());
    }

    @Test
    void aCommandWhoseWaitTimedOutNeverRunsWhenThePollerGetsToIt() {
        PollerProxy proxy = new PollerProxy("test", c -> { }, c -> { });
        InvokerHosted host = new InvokerHosted(() -> 0);
        AtomicInteger ran = new AtomicInteger();
        assertThrows(TransportException.class, () -> proxy.runAndWait(host, ran::incrementAndGet, 50));
        assertEquals(1, proxy.drain(), "the withdrawn command is still taken off the queue");
        assertEquals(0, ran.get(), "a caller told the command failed must not find it done later");
    }

    @Test
    void aPollerOnItsOwnThreadRunsTheCommandThereAndStopsAtClose() {
        PollerProxy proxy = new PollerProxy("test", c -> { }, c -> { });
        AtomicReference<HostedAgent> self = new AtomicReference<>();
        AtomicReference<Boolean> onAgentThreadInCycle = new AtomicReference<>();
        Agent agent = draining(proxy);
        HostedAgent thread = io.rdmabus.spi.DedicatedAgentHost.start(new AgentRunner(new BackoffIdleStrategy(), Throwable::printStackTrace, null, agent));
        self.set(thread);
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        proxy.runAndWait(thread, () -> {
            ranOn.set(Thread.currentThread());
            onAgentThreadInCycle.set(self.get().onAgentThread());
        }, 10_000);
        assertEquals("test-poller", ranOn.get().getName(), "ran on the poller's own thread");
        assertTrue(onAgentThreadInCycle.get(), "the poller's thread knows it is the agent's");
        assertFalse(thread.onAgentThread(), "the test thread is not the agent's");
        assertFalse(thread.isClosed());
        thread.close();
        assertTrue(thread.isClosed(), "closed once close() returned");
    }
}
