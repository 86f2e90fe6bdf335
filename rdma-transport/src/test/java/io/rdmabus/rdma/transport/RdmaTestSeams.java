package io.rdmabus.rdma.transport;

import io.rdmabus.TransportException;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the rxe tests do to a transport that production code never does, through package-private seams: a command on
 * the cm agent's thread through its proxy, and a poller subclass built by the transport's poller factory.
 */
final class RdmaTestSeams {
    private static final long COMMAND_WAIT_MS = 3000;

    private RdmaTestSeams() {
    }

    /**
     * Breaks every RC connection of {@code t} as a network fault would ({@code rdma_disconnect} on the cm thread: our QP
     * goes to the error state, posted work flushes, the peer gets DISCONNECTED). Seeds redial.
     *
     * @return connections broken
     */
    static int breakConnections(final RdmaTransport t) {
        return breakConnectionsAndHold(t, null);
    }

    /** Longest a {@link #breakConnectionsAndHold} keeps the cm agent, whatever the test does. */
    private static final long HOLD_MAX_MS = 60_000;

    /**
     * As {@link #breakConnections}, then keeps {@code t}'s cm agent busy until {@code release} opens (at most 60 s), so it
     * neither redials nor accepts: the outage lasts as long as the test wants. The poller runs on (it fails the broken
     * connections and keeps their resume state). {@code release} null: no hold.
     *
     * @return connections broken
     */
    static int breakConnectionsAndHold(final RdmaTransport t, final CountDownLatch release) {
        AtomicInteger broken = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(1);
        t.cmAgentProxy().run(() -> {
            try {
                for (Connection c : t.connectionTable().live()) {
                    if (!c.destroyed) {
                        try {
                            c.cmId.disconnect();
                            broken.incrementAndGet();
                        } catch (RuntimeException ignored) {
                            // already going away
                        }
                    }
                }
            } finally {
                done.countDown();
            }
            if (release != null) {
                try {
                    release.await(HOLD_MAX_MS, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        try {
            if (!done.await(COMMAND_WAIT_MS, TimeUnit.MILLISECONDS)) {
                throw new TransportException("the rdma cm agent did not run the command within " + COMMAND_WAIT_MS + " ms");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return broken.get();
    }

    /**
     * A transport whose poller, after a reconnect that asks to resume, sends its SUBs {@code subDelayMs} later instead of
     * right behind the RESUME, so they reach the publisher after its replay has ended (what a slow link or a later
     * completion batch can do). 0: an ordinary transport.
     */
    static RdmaTransport withLateSubsAfterResume(final RdmaTransportConfig config, final long subDelayMs) {
        if (subDelayMs <= 0) {
            return new RdmaTransport(config);
        }
        return new RdmaTransport(config, (roleName, ctx, commands, cmProxy) -> new LateSubPoller(roleName, ctx, commands, cmProxy, subDelayMs));
    }

    /** See {@link #withLateSubsAfterResume}. */
    private static final class LateSubPoller extends Poller {
        private final long subDelayMs;
        private final PollerProxy commands;
        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread th = new Thread(r, "late-sub-timer");
            th.setDaemon(true);
            return th;
        });

        LateSubPoller(final String roleName, final RdmaContext ctx, final PollerProxy commands, final CmAgentProxy cmProxy,
                      final long subDelayMs) {
            super(roleName, ctx, commands, cmProxy);
            this.subDelayMs = subDelayMs;
            this.commands = commands;
        }

        @Override
        void announceSubscriptions(final Connection c, final boolean resuming) {
            if (!resuming) {
                super.announceSubscriptions(c, false);
                return;
            }
            timer.schedule(() -> commands.run(() -> super.announceSubscriptions(c, false)), subDelayMs, TimeUnit.MILLISECONDS);
        }

        @Override
        public void onClose() {
            timer.shutdownNow();
            super.onClose();
        }
    }
}
