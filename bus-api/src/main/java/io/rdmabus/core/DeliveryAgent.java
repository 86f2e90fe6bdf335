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

    DeliveryAgent(final String busName) {
        this.roleName = "rdma-bus-delivery-" + busName;
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
    }

    @Override
    public int doWork() {
        int work = commands.drain(Runnable::run);
        for (int i = 0; i < channels.size(); i++) {
            work += channels.get(i).deliver();
        }
        return work;
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
