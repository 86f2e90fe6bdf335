package io.rdmabus.core;

import io.rdmabus.BusException;
import io.rdmabus.Delivery;
import io.rdmabus.MessageTooLargeException;
import io.rdmabus.PublishStatus;

import org.agrona.concurrent.IdleStrategy;
import org.reactivestreams.Subscription;

import reactor.core.CoreSubscriber;
import reactor.core.publisher.MonoSink;

/**
 * Pulls values from the user's {@code Publisher} only as fast as the publication takes them: it requests a small
 * batch, offers each value until the transport takes it (idling between tries), and only then asks for more.
 *
 * @param <T> value type
 */
final class PublishSubscriber<T> implements CoreSubscriber<T> {
    private static final int BATCH = 64;

    private final DefaultPublication<T> publication;
    private final MonoSink<Void> done;
    private final IdleStrategy idle;
    private final DefaultBus bus;
    private Subscription upstream;
    private int consumedSinceRequest;
    private volatile boolean cancelled;
    private boolean terminated;

    PublishSubscriber(final DefaultBus bus, final DefaultPublication<T> publication, final MonoSink<Void> done, final IdleStrategy idle) {
        this.bus = bus;
        this.publication = publication;
        this.done = done;
        this.idle = idle;
        done.onCancel(this::cancel);
    }

    private void cancel() {
        cancelled = true;
        final Subscription s = upstream;
        if (s != null) {
            s.cancel();
        }
        publication.close();
    }

    @Override
    public void onSubscribe(final Subscription s) {
        upstream = s;
        if (cancelled) {
            s.cancel();
            return;
        }
        s.request(BATCH);
    }

    @Override
    public void onNext(final T value) {
        if (terminated || cancelled) {
            return;
        }
        idle.reset();
        while (true) {
            final int status = publication.offer(value);
            if (status == PublishStatus.OK) {
                break;
            }
            if (status == PublishStatus.NOT_CONNECTED && publication.topic().delivery() == Delivery.BEST_EFFORT) {
                bus.onDroppedNotConnected();
                break;
            }
            if (status == PublishStatus.MESSAGE_TOO_LARGE) {
                fail(new MessageTooLargeException("Topic '" + publication.topic().name() + "': a value encodes to "
                    + publication.topic().codec().encodedLength(value) + " bytes, over maxMessageLength "
                    + publication.topic().maxMessageLength() + (publication.topic().delivery() == Delivery.BEST_EFFORT
                    ? " or one best-effort frame (use a RELIABLE topic for large messages)" : "")));
                return;
            }
            if (status == PublishStatus.CLOSED) {
                fail(new BusException("Bus closed while publishing to '" + publication.topic().name() + "'"));
                return;
            }
            if (cancelled) {
                return;
            }
            idle.idle(); // BACK_PRESSURED, or a reliable topic waiting for its first subscriber
        }
        if (++consumedSinceRequest == BATCH / 2) {
            consumedSinceRequest = 0;
            upstream.request(BATCH / 2);
        }
    }

    private void fail(final Throwable error) {
        terminated = true;
        upstream.cancel();
        publication.close();
        done.error(error);
    }

    @Override
    public void onError(final Throwable t) {
        if (terminated) {
            return;
        }
        terminated = true;
        publication.close();
        done.error(t);
    }

    @Override
    public void onComplete() {
        if (terminated) {
            return;
        }
        terminated = true;
        idle.reset();
        int status;
        while ((status = publication.flush()) == PublishStatus.BACK_PRESSURED && !cancelled) {
            idle.idle();
        }
        publication.close();
        if (status == PublishStatus.CLOSED) {
            done.error(new BusException("Bus closed before a fragmented message to '" + publication.topic().name() + "' went out"));
        } else {
            done.success();
        }
    }
}
