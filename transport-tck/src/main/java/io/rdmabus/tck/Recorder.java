package io.rdmabus.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import io.rdmabus.Received;

import org.reactivestreams.Subscription;

import reactor.core.publisher.BaseSubscriber;

/**
 * A test subscriber that records every {@link Received} signal, with manual or unbounded demand, and an optional
 * per-element pause to play a slow consumer. Thread-safe for the reads the tests make while it is being fed.
 *
 * @param <T> value type
 */
public final class Recorder<T> extends BaseSubscriber<Received<T>> {
    private final long initialRequest;
    private final long pauseNsPerElement;
    private final List<Received<T>> received = new ArrayList<>();
    private final CountDownLatch terminated = new CountDownLatch(1);
    private volatile Throwable error;
    private volatile boolean completed;

    private Recorder(final long initialRequest, final long pauseNsPerElement) {
        this.initialRequest = initialRequest;
        this.pauseNsPerElement = pauseNsPerElement;
    }

    /** @param <T> value type @return a recorder that requests everything up front */
    public static <T> Recorder<T> unbounded() {
        return new Recorder<>(Long.MAX_VALUE, 0);
    }

    /** @param <T> value type @return a recorder that requests nothing until {@link #request(long)} is called */
    public static <T> Recorder<T> manual() {
        return new Recorder<>(0, 0);
    }

    /**
     * @param pause time spent in each {@code onNext} before requesting the next element (blocking the bus's delivery)
     * @param <T>   value type
     * @return a recorder that requests one element at a time
     */
    public static <T> Recorder<T> slow(final Duration pause) {
        return new Recorder<>(1, pause.toNanos());
    }

    @Override
    protected void hookOnSubscribe(final Subscription subscription) {
        if (initialRequest > 0) {
            subscription.request(initialRequest);
        }
    }

    @Override
    protected void hookOnNext(final Received<T> value) {
        synchronized (received) {
            received.add(value);
        }
        if (pauseNsPerElement > 0) {
            try {
                Thread.sleep(Duration.ofNanos(pauseNsPerElement));
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
            request(1);
        }
    }

    @Override
    protected void hookOnError(final Throwable throwable) {
        error = throwable;
    }

    @Override
    protected void hookOnComplete() {
        completed = true;
    }

    @Override
    protected void hookFinally(final reactor.core.publisher.SignalType type) {
        terminated.countDown();
    }

    /** @return a copy of everything received so far */
    public List<Received<T>> received() {
        synchronized (received) {
            return new ArrayList<>(received);
        }
    }

    /** @return the values received so far */
    public List<T> values() {
        return received().stream().map(Received::value).toList();
    }

    /** @return how many elements arrived */
    public int count() {
        synchronized (received) {
            return received.size();
        }
    }

    /** @param filter which elements to count @return how many of the received elements match */
    public long count(final Predicate<Received<T>> filter) {
        return received().stream().filter(filter).count();
    }

    /** @return the error signal, or null */
    public Throwable error() {
        return error;
    }

    /** @return true once onComplete arrived */
    public boolean isCompleted() {
        return completed;
    }

    /**
     * @param timeout how long to wait for onComplete or onError
     * @return true if the subscriber terminated in time
     * @throws InterruptedException if interrupted
     */
    public boolean awaitTermination(final Duration timeout) throws InterruptedException {
        return terminated.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Waits until {@code condition} holds for the recorded elements.
     *
     * @param condition what to wait for
     * @param timeout   how long
     * @return true if it held in time
     * @throws InterruptedException if interrupted
     */
    public boolean awaitUntil(final Predicate<List<Received<T>>> condition, final Duration timeout) throws InterruptedException {
        final long deadlineNs = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (condition.test(received())) {
                return true;
            }
            if (error != null || System.nanoTime() >= deadlineNs) {
                return condition.test(received());
            }
            Thread.sleep(5);
        }
    }

    /**
     * @param n how many elements to wait for
     * @param timeout how long
     * @return true if at least {@code n} arrived in time
     * @throws InterruptedException if interrupted
     */
    public boolean awaitCount(final int n, final Duration timeout) throws InterruptedException {
        return awaitUntil(list -> list.size() >= n, timeout);
    }
}
