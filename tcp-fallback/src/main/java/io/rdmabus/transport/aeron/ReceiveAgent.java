package io.rdmabus.transport.aeron;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

/**
 * The transport's one receive loop: polls every subscription of the transport. Subscriptions are added and removed
 * through a command queue, so the subscription list is touched by this thread only.
 */
final class ReceiveAgent implements Agent {
    private static final int FRAGMENT_LIMIT = 64;
    private static final int COMMAND_CAPACITY = 1024;

    private final String roleName;
    private final ManyToOneConcurrentArrayQueue<Runnable> commands = new ManyToOneConcurrentArrayQueue<>(COMMAND_CAPACITY);
    private final List<AeronSubscription> subscriptions = new ArrayList<>();
    private volatile Thread thread;

    ReceiveAgent(final String roleName) {
        this.roleName = roleName;
    }

    @Override
    public void onStart() {
        thread = Thread.currentThread();
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
        if (Thread.currentThread() == thread) {
            subscriptions.remove(subscription);
            return CompletableFuture.completedFuture(null);
        }
        return submit(() -> subscriptions.remove(subscription));
    }

    /**
     * Runs a control operation (an Aeron add, which waits for the media driver) on the agent thread. The Aeron client
     * treats an interrupt during such a wait as fatal for the whole client, and user threads get interrupted (Reactor
     * cancels tasks with an interrupt); the agent thread is never interrupted while running, so the client survives.
     *
     * @param operation the operation
     * @param <T>       its result type
     * @return completes with its result or its exception
     */
    <T> CompletableFuture<T> call(final Supplier<T> operation) {
        final CompletableFuture<T> done = new CompletableFuture<>();
        offer(() -> {
            try {
                done.complete(operation.get());
            } catch (final RuntimeException | Error ex) {
                done.completeExceptionally(ex);
            }
        });
        return done;
    }

    /** @return whether the caller is the agent thread */
    boolean isAgentThread() {
        return Thread.currentThread() == thread;
    }

    private void offer(final Runnable command) {
        while (!commands.offer(command)) {
            Thread.onSpinWait();
            Thread.yield();
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
