package io.rdmabus.tck;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.BusStats;
import io.rdmabus.MessageHandler;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.ThreadingMode;
import io.rdmabus.Topic;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.reactivestreams.Publisher;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A bus built with {@code ThreadingMode.INVOKER}, driven the way an application drives one: a loop of its own calls
 * {@link Bus#doWork()} and idles when there is nothing to do. Lets the TCK run every case against the invoker mode.
 * The loop stops once the bus is closed.
 */
public final class InvokedBus implements Bus {
    private final Bus bus;
    private final Thread loop;
    private volatile boolean running = true;

    /**
     * @param bus      a started bus in {@code INVOKER} mode
     * @param loopName the application loop thread's name
     */
    public InvokedBus(final Bus bus, final String loopName) {
        this.bus = bus;
        this.loop = new Thread(this::runLoop, loopName);
        loop.setDaemon(true);
        loop.start();
    }

    /**
     * @param bus  a started bus
     * @param mode the threading mode it was built with
     * @return the bus as a test uses it: an {@code INVOKER} bus with an application loop driving it, any other as it is
     */
    public static Bus driven(final Bus bus, final ThreadingMode mode) {
        return mode == ThreadingMode.INVOKER ? new InvokedBus(bus, "rdma-bus-app-loop-" + bus.name()) : bus;
    }

    private void runLoop() {
        final IdleStrategy idle = new BackoffIdleStrategy();
        while (running) {
            idle.idle(bus.doWork());
        }
    }

    @Override
    public <T> Flux<Received<T>> subscribeReceived(final Topic<T> topic, final SubscribeOptions<T> options) {
        return bus.subscribeReceived(topic, options);
    }

    @Override
    public Disposable subscribeInPlace(final Topic<?> topic, final MessageHandler handler) {
        return bus.subscribeInPlace(topic, handler);
    }

    @Override
    public <T> Mono<Void> publish(final Topic<T> topic, final Publisher<? extends T> values) {
        return bus.publish(topic, values);
    }

    @Override
    public <T> BusPublication<T> publication(final Topic<T> topic) {
        return bus.publication(topic);
    }

    @Override
    public int doWork() {
        return bus.doWork();
    }

    @Override
    public String transportName() {
        return bus.transportName();
    }

    @Override
    public BusStats stats() {
        return bus.stats();
    }

    @Override
    public void close() {
        try {
            bus.close();
        } finally {
            running = false;
            try {
                loop.join();
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
