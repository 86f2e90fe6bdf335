package io.rdmabus.transport.tcp;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.rdmabus.Delivery;
import io.rdmabus.spi.SubscriptionSink;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The subscribing side of per-topic flow control on one connection ({@link TcpProtocol}, SUBSCRIBE and CREDIT): hands
 * each DATA frame to this node's subscriptions of its topic; for a reliable topic whose subscription pushes back, copies
 * the frame into that topic's queue (later frames of the topic queue behind it, in order) and offers the queue again
 * after a short, growing delay, while the connection goes on with other topics. Bytes the subscriptions took go back to
 * the publisher in a CREDIT once a quarter of the window was taken. A topic's queue can hold at most what the window
 * lets the publisher send; a publisher that sends past twice that ignores its credit and is refused. A best-effort topic
 * has no credit: a frame its (raw) subscription refuses waits the same way, but one that would take its queue past the
 * window is dropped and counted ({@link TcpTransport#bestEffortDrops()}). The bus's own subscriptions never refuse a
 * best-effort frame: they drop and count it at their ring.
 *
 * <p>Owner: the connection's event loop (every method).
 */
final class InboundTopics {
    private static final long RETRY_MIN_NS = TimeUnit.MICROSECONDS.toNanos(50);
    private static final long RETRY_MAX_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private final TcpTransport transport;
    private final int windowBytes;
    private final ByteBufAllocator alloc;
    private final EventLoop loop;
    private final Consumer<ByteBuf> sendToPeer;
    private final BooleanSupplier closing;
    private final Int2ObjectHashMap<Queue> topics = new Int2ObjectHashMap<>();
    /** Topics with frames waiting for a subscription to take them, each once. */
    private final ArrayDeque<Queue> waiting = new ArrayDeque<>();
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
    private final Runnable retryTask = this::retryWaiting;
    private boolean retryScheduled;
    private long retryDelayNs = RETRY_MIN_NS;

    /**
     * @param windowBytes the window this node grants each reliable topic ({@link TcpTransportConfig#topicWindowBytes()})
     * @param sendToPeer  queues a message to the peer (CREDIT)
     * @param closing     true once the connection is closing (nothing is retried)
     */
    InboundTopics(final TcpTransport transport, final int windowBytes, final ByteBufAllocator alloc, final EventLoop loop,
                  final Consumer<ByteBuf> sendToPeer, final BooleanSupplier closing) {
        this.transport = transport;
        this.windowBytes = windowBytes;
        this.alloc = alloc;
        this.loop = loop;
        this.sendToPeer = sendToPeer;
        this.closing = closing;
    }

    /**
     * One DATA frame from the peer.
     *
     * @param buffer      a heap buffer holding the frame
     * @param wireLength  the whole DATA message's length on the wire (what credit counts)
     * @return null, or why the peer must be refused (it sent past its credit)
     */
    String deliver(final int topicId, final ByteBuf buffer, final int frameOffset, final int frameLength, final int wireLength) {
        final TcpSubscription[] targets = transport.subscriptionsFor(topicId);
        if (targets == null) {
            transport.onFrameWithoutSubscriber();
            return null;
        }
        view.wrap(buffer.array(), buffer.arrayOffset() + frameOffset, frameLength);
        Queue topic = topics.get(topicId);
        if (topic == null) {
            topic = new Queue(topicId);
            topics.put(topicId, topic);
        }
        // read per frame, not once per queue: the topic id's subscriptions can be replaced by ones of the other delivery
        topic.reliable = targets[0].topic.delivery() == Delivery.RELIABLE;
        if (topic.frames.isEmpty()) {
            final int refusedAt = offer(targets, 0, frameLength);
            if (refusedAt < 0) {
                taken(topic, wireLength);
                return null;
            }
            topic.headTargets = targets;
            topic.headIndex = refusedAt;
        }
        if (!topic.reliable && topic.queuedBytes + wireLength > windowBytes) {
            transport.onBestEffortDrop();
            return null;
        }
        if (topic.queuedBytes + wireLength > 2L * windowBytes) {
            return "topic " + topicId + ": the peer sent " + (topic.queuedBytes + wireLength) + " bytes its subscriptions have not taken, "
                + "past the window of " + windowBytes + " this node granted (it ignores credit)";
        }
        final ByteBuf copy = alloc.heapBuffer(frameLength, frameLength);
        copy.writeBytes(buffer, frameOffset, frameLength);
        topic.frames.addLast(copy);
        topic.queuedBytes += wireLength;
        transport.onFrameQueued();
        if (!topic.waiting) {
            topic.waiting = true;
            waiting.addLast(topic);
        }
        scheduleRetry();
        return null;
    }

    /** @return how many topics have frames waiting (a diagnostic) */
    int waitingTopics() {
        return waiting.size();
    }

    /** Frees every queued frame (the connection closed). */
    void releaseAll() {
        topics.values().forEach(Queue::release);
        topics.clear();
        waiting.clear();
    }

    /** @return the index of the first target that pushed back, or -1 once every target from {@code from} took the frame in {@link #view} */
    private int offer(final TcpSubscription[] targets, final int from, final int frameLength) {
        for (int i = from; i < targets.length; i++) {
            if (targets[i].deliver(view, 0, frameLength) == SubscriptionSink.BACK_PRESSURE) {
                return i;
            }
        }
        return -1;
    }

    /** A reliable frame was taken (or dropped with its subscriptions): its bytes go back to the publisher in batches. */
    private void taken(final Queue topic, final int wireLength) {
        if (!topic.reliable) {
            return;
        }
        topic.takenSinceCredit += wireLength;
        if (topic.takenSinceCredit >= windowBytes / 4) {
            sendToPeer.accept(TcpProtocol.credit(alloc, topic.topicId, topic.takenSinceCredit));
            topic.takenSinceCredit = 0;
        }
    }

    private void scheduleRetry() {
        if (!retryScheduled) {
            retryScheduled = true;
            loop.schedule(retryTask, retryDelayNs, TimeUnit.NANOSECONDS);
            retryDelayNs = Math.min(RETRY_MAX_NS, retryDelayNs * 2);
        }
    }

    /** Offers each waiting topic's queue again, in order, until a subscription pushes back. */
    private void retryWaiting() {
        retryScheduled = false;
        if (closing.getAsBoolean()) {
            return;
        }
        for (int n = waiting.size(); n > 0; n--) {
            final Queue topic = waiting.pollFirst();
            drain(topic);
            if (topic.frames.isEmpty()) {
                topic.waiting = false;
            } else {
                waiting.addLast(topic);
            }
        }
        if (waiting.isEmpty()) {
            retryDelayNs = RETRY_MIN_NS;
        } else {
            scheduleRetry();
        }
    }

    private void drain(final Queue topic) {
        ByteBuf head;
        while ((head = topic.frames.peekFirst()) != null) {
            TcpSubscription[] targets = topic.headTargets;
            if (targets == null) {
                targets = transport.subscriptionsFor(topic.topicId);
                topic.headIndex = 0;
                if (targets == null) { // the subscriptions are gone: what waited for them is dropped and its credit given back
                    transport.onFrameWithoutSubscriber();
                    taken(topic, topic.removeHead());
                    continue;
                }
            }
            view.wrap(head.array(), head.arrayOffset() + head.readerIndex(), head.readableBytes());
            final int refusedAt = offer(targets, topic.headIndex, head.readableBytes());
            if (refusedAt >= 0) {
                topic.headTargets = targets;
                topic.headIndex = refusedAt;
                return;
            }
            topic.headTargets = null;
            taken(topic, topic.removeHead());
        }
    }

    /** One reliable topic's frames that wait for its subscriptions, and its credit not yet given back. */
    private static final class Queue {
        final int topicId;
        final ArrayDeque<ByteBuf> frames = new ArrayDeque<>();
        /** Wire bytes of the queued frames. */
        long queuedBytes;
        /** Wire bytes taken since the last CREDIT. */
        int takenSinceCredit;
        /** The head frame's targets and the first of them that has not taken it yet; null targets: none offered yet. */
        TcpSubscription[] headTargets;
        int headIndex;
        boolean waiting;
        /** As this node's subscriptions of the topic are (the publisher takes credit only for a reliable subscriber). */
        boolean reliable;

        Queue(final int topicId) {
            this.topicId = topicId;
        }

        /** @return the removed head frame's wire length */
        int removeHead() {
            final ByteBuf head = frames.pollFirst();
            final int wireLength = TcpProtocol.DATA_HEADER + head.readableBytes();
            queuedBytes -= wireLength;
            head.release();
            return wireLength;
        }

        void release() {
            ByteBuf frame;
            while ((frame = frames.pollFirst()) != null) {
                frame.release();
            }
            queuedBytes = 0;
        }
    }
}
