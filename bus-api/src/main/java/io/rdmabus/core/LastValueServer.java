package io.rdmabus.core;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.BusPublication;
import io.rdmabus.PublishStatus;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;

import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The publishing side of late join for one cached topic in one bus: subscribes the topic's request topic and answers
 * each request with a snapshot of every publication of the topic in this bus ({@link LastValueCache}), on the
 * snapshot topic (LastValueProtocol). Requests are answered one at a time on a thread of its own, never on the
 * delivery agent: a reply may wait for room (back-pressure) that only the delivery agent makes, e.g. for a joiner in
 * this same bus.
 */
final class LastValueServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LastValueServer.class);
    /** How long a reply part waits for a connected, unblocked snapshot topic before the reply is given up (the joiner asks again). */
    private static final long REPLY_WAIT_NS = TimeUnit.SECONDS.toNanos(2);

    private final Topic<?> topic;
    private final List<LastValueCache> caches = new CopyOnWriteArrayList<>();
    private final BusPublication<byte[]> replies;
    private final Scheduler scheduler;
    private final Disposable requests;

    LastValueServer(final DefaultBus bus, final Topic<?> topic) {
        this.topic = topic;
        this.replies = bus.publication(LastValueProtocol.snapshotTopic(topic));
        this.scheduler = Schedulers.newSingle("rdma-bus-lvc-" + bus.name(), true);
        this.requests = bus.subscribeDirect(LastValueProtocol.requestTopic(topic), SubscribeOptions.<byte[]>defaults())
            .publishOn(scheduler)
            .subscribe(this::answer, error -> LOG.debug("topic {}: late-join requests ended: {}", topic.name(), error.toString()));
    }

    void add(final LastValueCache cache) {
        caches.add(cache);
    }

    void remove(final LastValueCache cache) {
        caches.remove(cache);
    }

    private void answer(final Received<byte[]> request) {
        final byte[] bytes = request.value();
        if (bytes.length != LastValueProtocol.REQUEST_LENGTH) {
            LOG.warn("topic {}: dropped a late-join request of {} bytes (expected {})", topic.name(), bytes.length,
                LastValueProtocol.REQUEST_LENGTH);
            return;
        }
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        if (buffer.getInt(8) != topic.topicId()) {
            LOG.warn("topic {}: dropped a late-join request for topic id {}", topic.name(), buffer.getInt(8));
            return;
        }
        final long requestId = buffer.getLong(0);
        for (final LastValueCache cache : caches) {
            for (final byte[] part : cache.snapshot(requestId)) {
                if (!offer(part)) {
                    return;
                }
            }
        }
    }

    private boolean offer(final byte[] part) {
        final long deadlineNs = System.nanoTime() + REPLY_WAIT_NS;
        while (true) {
            final int status = replies.offer(part);
            if (status == PublishStatus.OK) {
                return true;
            }
            if (status == PublishStatus.CLOSED || status == PublishStatus.MESSAGE_TOO_LARGE || System.nanoTime() >= deadlineNs) {
                LOG.debug("topic {}: late-join reply given up: {}", topic.name(), PublishStatus.describe(status));
                return false;
            }
            LockSupport.parkNanos(100_000);
        }
    }

    @Override
    public void close() {
        requests.dispose();
        scheduler.dispose();
        replies.close();
    }
}
