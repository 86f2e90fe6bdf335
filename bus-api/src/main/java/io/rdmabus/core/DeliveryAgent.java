package io.rdmabus.core;

import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

/**
 * The bus's one delivery loop: drains each subscription's ring into its {@code Flux} as demand allows. Adding and
 * removing subscriptions reaches it through a command queue, so the loop never takes a lock.
 */
final class DeliveryAgent implements Agent {
    private final String roleName;
    private final ManyToOneConcurrentArrayQueue<Runnable> commands = new ManyToOneConcurrentArrayQueue<>(1024);
    private final List<SubscriptionChannel<?>> channels = new ArrayList<>();
    /** Wakes the thread that runs this agent once a command is queued (any thread). */
    private final Runnable wake;

    /**
     * @param busName the bus's name
     * @param wake    ends the delivering thread's park or sleep (any thread)
     */
    DeliveryAgent(final String busName, final Runnable wake) {
        this.roleName = "rdma-bus-delivery-" + busName;
        this.wake = wake;
    }

    void add(final SubscriptionChannel<?> channel) {
        offerOrFail(() -> channels.add(channel));
    }

    void remove(final SubscriptionChannel<?> channel) {
        offerOrFail(() -> {
            if (channels.remove(channel)) {
                channel.complete();
            }
            channel.finishClose();
        });
    }

    private void offerOrFail(final Runnable command) {
        while (!commands.offer(command)) {
            Thread.onSpinWait(); // 1024 pending commands: the agent is behind, wait for it
        }
        wake.run();
    }

    @Override
    public int doWork() {
        int work = commands.drain(Runnable::run);
        for (int i = 0; i < channels.size(); i++) {
            work += channels.get(i).deliver();
        }
        return work;
    }

    /**
     * @return true if a subscription holds messages its subscriber has not asked for yet: a request reaches this agent
     *     only when it looks again, so its thread parks (briefly) rather than sleeping (this agent's thread)
     */
    boolean waitsForDemand() {
        for (int i = 0; i < channels.size(); i++) {
            if (channels.get(i).waitsForDemand()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void onClose() {
        commands.drain(Runnable::run);
        for (final SubscriptionChannel<?> channel : channels) {
            channel.complete();
        }
        channels.clear();
    }

    @Override
    public String roleName() {
        return roleName;
    }
}
