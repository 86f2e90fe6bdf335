package io.rdmabus.tck;

import java.util.Deque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.rdmabus.Bus;
import io.rdmabus.Delivery;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;

import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The reactive-streams {@link PublisherVerification} applied to the {@code Flux} of {@link Bus#subscribe(Topic)}.
 *
 * <p>{@link #createPublisher(long)} returns a cold publisher: each subscription subscribes to a fresh reliable topic on
 * the subscriber bus and, from another thread, publishes {@code elements} values on it from the publisher bus. The
 * bus's subscribe {@code Flux} never completes by itself (it completes when the bus closes), so the finite stream is
 * the bus {@code Flux} limited with {@code take(elements)}; demand, cancellation, signalling order and the
 * §3.13 reference drop are still the bus's. {@link #createFailedPublisher()} is a subscription on a closed bus, which
 * the bus must refuse with {@code onSubscribe} then {@code onError} (rule 1.9).
 */
final class BusPublisherVerification extends PublisherVerification<String> {
    private static final AtomicInteger TOPICS = new AtomicInteger();
    private static final int MAX_EVENTS = 12;

    private static final AtomicInteger PUBLISH_THREADS = new AtomicInteger();
    /**
     * Where each rule's elements are published: a thread of its own per publish that is still running. Not
     * {@code boundedElastic}: a publish cancelled by its rule goes on closing its publication (which waits, bounded, for
     * the frames it already committed to be written: nothing is lost), while the scheduler already counts the worker
     * as free; the next rule's publish was queued behind that close and did not start within the rule's timeout.
     */
    private static final Scheduler PUBLISHING = Schedulers.fromExecutorService(Executors.newCachedThreadPool(r -> {
        final Thread t = new Thread(r, "tck-rs-publish-" + PUBLISH_THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    }), "tck-rs-publish");

    private final Deque<String> events = new ConcurrentLinkedDeque<>();

    private final Bus publisherBus;
    private final Bus subscriberBus;
    private final Supplier<Bus> closedBus;
    private final String topicPrefix;

    /**
     * @param env               timeouts
     * @param gcTimeoutMillis   how long after cancel the bus must have dropped the subscriber (rule 3.13)
     * @param publisherBus      publishes the elements
     * @param subscriberBus     the bus whose subscribe Flux is verified
     * @param closedBus         makes a closed bus for {@link #createFailedPublisher()}
     * @param topicPrefix       makes topic names unique per run
     */
    BusPublisherVerification(final TestEnvironment env, final long gcTimeoutMillis, final Bus publisherBus, final Bus subscriberBus,
                             final Supplier<Bus> closedBus, final String topicPrefix) {
        super(env, gcTimeoutMillis);
        this.publisherBus = publisherBus;
        this.subscriberBus = subscriberBus;
        this.closedBus = closedBus;
        this.topicPrefix = topicPrefix;
    }

    @Override
    public Publisher<String> createPublisher(final long elements) {
        return Flux.defer(() -> {
            final Topic<String> topic = Topic.of(topicPrefix + "-" + TOPICS.incrementAndGet(), Codecs.utf8(), Delivery.RELIABLE);
            final Flux<String> values = subscriberBus.subscribe(topic);
            // publish waits for the subscriber to connect and only as fast as it requests (reliable: credits)
            final Flux<String> source = elements == Long.MAX_VALUE
                ? Flux.<String, Long>generate(() -> 0L, (i, sink) -> {
                    sink.next("e" + i);
                    return i + 1;
                })
                : Flux.range(0, (int) Math.min(elements, Integer.MAX_VALUE)).map(i -> "e" + i);
            final Disposable[] publishing = new Disposable[1];
            final Flux<String> limited = elements == Long.MAX_VALUE ? values : values.take(elements, true);
            final java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean();
            return limited
                .doOnNext(v -> {
                    if (first.compareAndSet(false, true)) {
                        event(topic, "first element delivered");
                    }
                })
                .doOnSubscribe(s -> {
                    event(topic, "subscribed; publishing " + elements);
                    publishing[0] = publisherBus.publish(topic, source.doOnSubscribe(x -> event(topic, "publish started on "
                            + Thread.currentThread().getName())))
                        .subscribeOn(PUBLISHING).subscribe(
                        done -> { }, error -> event(topic, "publish failed: " + error), () -> event(topic, "publish done"));
                })
                .doFinally(signal -> {
                    event(topic, "subscriber " + signal);
                    final Disposable d = publishing[0];
                    if (d != null) {
                        d.dispose();
                    }
                });
        });
    }

    private void event(final Topic<String> topic, final String what) {
        events.addLast(System.currentTimeMillis() % 100_000 + " ms " + topic.name() + ": " + what);
        while (events.size() > MAX_EVENTS) {
            events.pollFirst();
        }
    }

    /** @return the last publish/subscribe events of the created publishers (oldest first), for a hung rule's report */
    List<String> recentEvents() {
        return List.copyOf(events);
    }

    @Override
    public Publisher<String> createFailedPublisher() {
        final Bus closed = closedBus.get();
        return closed.subscribe(Topic.of(topicPrefix + "-failed", Codecs.utf8(), Delivery.RELIABLE));
    }
}
