package io.rdmabus.transport.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.rdmabus.spi.HostedAgent;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

/**
 * The transport's one receive loop: polls every subscription of the transport. Subscriptions are added and removed
 * through a command queue, so the subscription list is touched only by the thread running the agent's duty cycle (its
 * own thread, the bus's shared thread, or the thread inside {@code Bus.doWork()}, as the bus's threading mode says).
 */
final class ReceiveAgent implements Agent {
    private static final int FRAGMENT_LIMIT = 64;
    private static final int COMMAND_CAPACITY = 1024;

    private final String roleName;
    private final ManyToOneConcurrentArrayQueue<Runnable> commands = new ManyToOneConcurrentArrayQueue<>(COMMAND_CAPACITY);
    private final List<AeronSubscription> subscriptions = new ArrayList<>();
    /** Set once, right after the bus's agent host took this agent. */
    private volatile HostedAgent host;

    ReceiveAgent(final String roleName) {
        this.roleName = roleName;
    }

    void hostedAs(final HostedAgent hosted) {
        this.host = hosted;
    }

    @Override
    public int doWork() {
        int work = 0;
        Runnable command;
        while ((command = commands.poll()) != null) {
            command.run();
            work++;
        }
        for (int i = 0, n = subscriptions.size(); i < n; i++) {
            work += subscriptions.get(i).poll(FRAGMENT_LIMIT);
        }
        return work;
    }

    /**
     * @param subscription starts being polled on the agent's next duty cycle
     * @return completes once the agent polls it
     */
    CompletableFuture<Void> add(final AeronSubscription subscription) {
        return submit(() -> subscriptions.add(subscription));
    }

    /**
     * @param subscription stops being polled
     * @return completes once the agent has dropped it (the sink is not called after that)
     */
    CompletableFuture<Void> remove(final AeronSubscription subscription) {
        if (isAgentThread()) {
            subscriptions.remove(subscription);
            return CompletableFuture.completedFuture(null);
        }
        return submit(() -> subscriptions.remove(subscription));
    }

    /** @return whether the caller is running the agent's duty cycle right now */
    boolean isAgentThread() {
        final HostedAgent hosted = host;
        return hosted != null && hosted.onAgentThread();
    }

    private void offer(final Runnable command) {
        while (!commands.offer(command)) {
            final HostedAgent hosted = host;
            if (hosted != null) {
                hosted.idleWhileWaiting(); // 1024 commands pending: let the agent run them
            } else {
                Thread.yield();
            }
        }
    }

    private CompletableFuture<Void> submit(final Runnable action) {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final Runnable command = () -> {
            action.run();
            done.complete(null);
        };
        offer(command);
        return done;
    }

    @Override
    public void onClose() {
        subscriptions.clear();
        Runnable command;
        while ((command = commands.poll()) != null) {
            command.run();
        }
    }

    @Override
    public String roleName() {
        return roleName;
    }
}
