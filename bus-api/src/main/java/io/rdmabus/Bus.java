package io.rdmabus;

import org.reactivestreams.Publisher;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A broker-less publish/subscribe bus over one transport (RDMA, Aeron or TCP).
 *
 * <pre>{@code
 * try (Bus bus = Bus.builder().transport("aeron-ipc").build()) {
 *     Topic<String> news = Topic.of("news", Codecs.utf8(), Delivery.RELIABLE);
 *     bus.subscribe(news).subscribe(System.out::println);
 *     bus.publish(news, Flux.just("hello", "world")).block();
 * }
 * }</pre>
 *
 * <p>Subscriptions are cold: nothing is received until the {@code Flux} is subscribed, and each subscription
 * sees what is published after it connected. Closing the bus completes every subscription's {@code Flux}.
 */
public interface Bus extends AutoCloseable {
    /** @return a builder with sensible defaults (transport {@code "auto"}, backoff idle strategy) */
    static BusBuilder builder() {
        return new BusBuilder();
    }

    /**
     * @param topic the topic
     * @param <T>   value type
     * @return the values, honouring demand (reliable: demand becomes credits, so a slow subscriber slows publishers)
     */
    default <T> Flux<T> subscribe(final Topic<T> topic) {
        return subscribeReceived(topic, SubscribeOptions.defaults()).map(Received::value);
    }

    /**
     * @param topic   the topic
     * @param options slow-consumer policy and ring size
     * @param <T>     value type
     * @return the values
     */
    default <T> Flux<T> subscribe(final Topic<T> topic, final SubscribeOptions<T> options) {
        return subscribeReceived(topic, options).map(Received::value);
    }

    /**
     * @param topic   the topic
     * @param options slow-consumer policy and ring size
     * @param <T>     value type
     * @return values with publisher session, sequence, timestamp and the count of messages lost before each
     */
    <T> Flux<Received<T>> subscribeReceived(Topic<T> topic, SubscribeOptions<T> options);

    /**
     * A zero-copy subscription: {@code handler} reads every message of {@code topic} in place, in the transport's receive
     * buffer, on the transport's receiving thread, with no copy, no queue and no allocation by the bus (see
     * {@link MessageHandler} for what that asks of the handler). Messages are whole (fragments reassembled), in order per
     * publisher session, with the same sequence rule and loss accounting as {@link #subscribeReceived}; a reliable topic
     * stays lossless, its publishers held back while the handler runs. An exception from the handler is reported to the
     * bus's error handler (logged and counted) and the message counts as delivered. {@link #subscribe} keeps its copying,
     * demand-driven semantics.
     *
     * @param topic   the topic
     * @param handler called for each message
     * @return dispose to stop the subscription
     */
    default Disposable subscribeInPlace(final Topic<?> topic, final MessageHandler handler) {
        throw new BusException(getClass().getSimpleName() + " does not support in-place subscriptions");
    }

    /**
     * Publishes every value of {@code values} under a new publisher session, requesting from {@code values} only
     * as fast as the transport takes them (reliable: as fast as the slowest subscriber). Reliable topics wait for a
     * subscriber before the first value; best-effort values with no subscriber are dropped and counted. The work runs
     * on the thread that emits {@code values}.
     *
     * @param topic  the topic
     * @param values the values
     * @param <T>    value type
     * @return completes when every value was taken; errors with {@link MessageTooLargeException} or
     *     {@link BusException} if the bus closes
     */
    <T> Mono<Void> publish(Topic<T> topic, Publisher<? extends T> values);

    /**
     * @param topic the topic
     * @param <T>   value type
     * @return a new imperative publication with its own session
     */
    <T> BusPublication<T> publication(Topic<T> topic);

    /**
     * For a bus built with {@link ThreadingMode#INVOKER}: runs one duty cycle of the bus's agents on the calling thread
     * (receive what the transport has, deliver it to subscribers with demand, run pending commands). Call it in the
     * application's loop; one thread at a time (a call while another thread is inside one returns 0 at once).
     *
     * @return the work done (0: nothing to do; idle as the application sees fit)
     * @throws BusException if the bus runs its agents on its own threads
     */
    default int doWork() {
        throw new BusException("doWork() is for a bus built with threadingMode(ThreadingMode.INVOKER)");
    }

    /**
     * @return the bus's name ({@link BusBuilder#name}): in its thread names, logs and counters file; a bus without one
     *     answers its transport's name
     */
    default String name() {
        return transportName();
    }

    /** @return the transport's name, e.g. {@code "aeron-udp"} */
    String transportName();

    /** @return a snapshot of the counters */
    BusStats stats();

    /** Completes all subscriptions, closes publications, stops the bus's and the transport's threads. Idempotent. */
    @Override
    void close();
}
