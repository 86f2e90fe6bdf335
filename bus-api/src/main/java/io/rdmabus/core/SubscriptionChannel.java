package io.rdmabus.core;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import com.lmax.disruptor.EventPoller;
import com.lmax.disruptor.InsufficientCapacityException;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.ProducerType;

import io.rdmabus.Delivery;
import io.rdmabus.Received;
import io.rdmabus.SlowConsumerPolicy;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.codec.CodecException;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TransportSubscription;

import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.Int2IntHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Scheduler;

/**
 * One subscription: the transport's receive thread validates, sequences and reassembles frames and copies each
 * message into a Disruptor ring; the bus's delivery agent drains the ring as the subscriber's demand allows,
 * decodes, applies the slow-consumer policy and emits into the {@code Flux}.
 *
 * <p>Back-pressure subscriptions (all reliable ones) emit on the delivery agent: a slow subscriber fills the ring,
 * which is the signal that reaches the publisher. Drop-oldest and conflating subscriptions must keep absorbing while
 * their subscriber is busy, so the agent only fills the policy buffer and a per-subscription worker emits from it.
 *
 * @param <T> value type
 */
final class SubscriptionChannel<T> implements SubscriptionSink {
    private static final Logger LOG = LoggerFactory.getLogger(SubscriptionChannel.class);
    private static final int DELIVERY_BATCH = 256;
    private static final long LOG_FIRST_N = 10;
    private static final long LOG_EVERY_N = 1000;

    final Topic<T> topic;
    private final SubscribeOptions<T> options;
    private final boolean backpressure;
    private final int maxFrameLength;
    private final RingBuffer<FrameEvent> ring;
    private final EventPoller<FrameEvent> poller;

    // receive thread only
    private final Int2ObjectHashMap<SessionState> sessions = new Int2ObjectHashMap<>();

    // delivery agent, and the emitting worker under policyLock
    private final Object policyLock = new Object();
    private final Int2IntHashMap lostCarry = new Int2IntHashMap(0);
    private final Scheduler.Worker emitter;
    private final AtomicBoolean emitScheduled = new AtomicBoolean();
    private final Runnable emitTask = this::emitFromPolicyBuffer;
    private final ArrayDeque<Received<T>> dropOldest;
    private final LinkedHashMap<Object, Received<T>> conflated;
    private final EventPoller.Handler<FrameEvent> drainHandler = this::onRingEvent;
    private long deliverBudget;
    private int drainedEvents;

    private final AtomicLong framesReceived = new AtomicLong();
    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong malformed = new AtomicLong();
    private final AtomicLong gaps = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    /** Payload bytes of the frames counted in framesReceived; receive thread only (ordered stores). */
    private final AtomicLong bytesReceived = new AtomicLong();

    volatile FluxSink<Received<T>> sink;
    /** The sink read once by {@link #deliver()} for the current drain, so a concurrent dispose cannot null it mid-drain. */
    private FluxSink<Received<T>> drainSink;
    volatile TransportSubscription transportSubscription;
    /** Where a transport error that ends this subscription is recorded too (the bus's counters file), or null. */
    volatile java.util.function.Consumer<Throwable> errorLog;
    private volatile Throwable transportError;
    private volatile boolean terminated;
    private volatile boolean closed;

    /**
     * @param emitter where drop-oldest/conflating subscriptions emit; unused for back-pressure ones (may be null)
     */
    SubscriptionChannel(final Topic<T> topic, final SubscribeOptions<T> options, final int maxFrameLength, final Scheduler.Worker emitter) {
        this.topic = topic;
        this.options = options;
        this.backpressure = !emitsOnWorker(topic, options);
        this.maxFrameLength = maxFrameLength;
        this.ring = RingBuffer.create(ProducerType.MULTI, FrameEvent::new, options.ringSize(),
            new com.lmax.disruptor.BlockingWaitStrategy());
        this.poller = ring.newPoller();
        ring.addGatingSequences(poller.getSequence());
        this.dropOldest = !backpressure && options.policy() == SlowConsumerPolicy.DROP_OLDEST ? new ArrayDeque<>(options.bufferSize()) : null;
        this.conflated = !backpressure && options.policy() == SlowConsumerPolicy.CONFLATE_LATEST ? new LinkedHashMap<>() : null;
        if (!backpressure && emitter == null) {
            throw new IllegalArgumentException("a " + options.policy() + " subscription needs an emitting worker");
        }
        this.emitter = backpressure ? null : emitter;
    }

    // ---------------------------------------------------------------- receive side (transport thread)

    @Override
    public int onFrame(final DirectBuffer buffer, final int offset, final int length) {
        if (closed) {
            return CONTINUE;
        }
        final int validity = FrameHeader.validate(buffer, offset, length, maxFrameLength);
        if (validity != FrameHeader.VALID) {
            countMalformed(FrameHeader.describe(validity), length);
            return CONTINUE;
        }
        final int topicId = FrameHeader.topicId(buffer, offset);
        if (topicId != topic.topicId()) {
            countMalformed("topic id " + topicId + " is not " + topic.name() + "'s " + topic.topicId(), length);
            return CONTINUE;
        }
        final int sessionId = FrameHeader.sessionId(buffer, offset);
        SessionState session = sessions.get(sessionId);
        if (session == null) {
            session = new SessionState();
            sessions.put(sessionId, session);
        }
        // the sequence rule of docs/wire-format.md: in order, duplicate, gap, or a suspect jump the next frame decides
        final long sequence = FrameHeader.sequence(buffer, offset);
        final long expected = session.nextSequence;
        final long gap;
        if (expected < 0) {
            gap = 0; // the session's first frame sets the expectation: joining a stream mid-way has lost nothing
        } else if (session.suspectSequence >= 0 && sequence == session.suspectSequence + 1) {
            gap = sequence - expected; // the suspect is confirmed: the stream moved on, and the suspect is among the lost
        } else if (sequence < expected) {
            decideSuspect(session, sessionId, sequence);
            duplicates.incrementAndGet();
            return CONTINUE;
        } else {
            gap = sequence - expected;
            if (gap > 0 && (topic.delivery() == Delivery.RELIABLE || gap > FrameHeader.BEST_EFFORT_GAP_BOUND)) {
                // a jump the session's next frame must confirm: dropped for now, the expectation stays
                decideSuspect(session, sessionId, sequence);
                session.suspectSequence = sequence;
                return CONTINUE;
            }
        }
        final int flags = FrameHeader.flags(buffer, offset);
        final boolean end = (flags & FrameHeader.FLAG_END) != 0;

        long slot = -1;
        if (end) {
            try {
                slot = ring.tryNext();
            } catch (final InsufficientCapacityException ex) {
                if (topic.delivery() == Delivery.RELIABLE) {
                    return BACK_PRESSURE; // nothing consumed, no state changed; the transport offers this frame again later
                }
                // best effort never slows the publisher: the datagram is dropped here, counted and reported
                decideSuspect(session, sessionId, sequence);
                framesReceived.incrementAndGet();
                bytesReceived.lazySet(bytesReceived.get() + length - FrameHeader.LENGTH);
                dropped.incrementAndGet();
                recordGap(session, gap);
                session.lostPending++;
                session.reassemblyLength = -1;
                session.nextSequence = sequence + 1;
                return CONTINUE;
            }
        }
        decideSuspect(session, sessionId, sequence);
        framesReceived.incrementAndGet();
        bytesReceived.lazySet(bytesReceived.get() + length - FrameHeader.LENGTH);
        recordGap(session, gap);
        session.nextSequence = sequence + 1;
        reassemble(slot, session, buffer, offset, length, sessionId, sequence, gap, flags);
        return CONTINUE;
    }

    /**
     * Puts a frame the sequence rule took into its message: a whole message is published at once, fragments are
     * collected in the session's reassembly buffer until the end fragment. Transport thread.
     *
     * @param slot the claimed ring slot for an end fragment, else -1
     * @param gap  frames lost just before this one (already counted)
     */
    private void reassemble(final long slot, final SessionState session, final DirectBuffer buffer, final int offset, final int length,
                            final int sessionId, final long sequence, final long gap, final int flags) {
        final boolean end = (flags & FrameHeader.FLAG_END) != 0;
        final int payloadOffset = offset + FrameHeader.LENGTH;
        final int payloadLength = length - FrameHeader.LENGTH;
        final long timestampNs = FrameHeader.timestampNs(buffer, offset);
        final boolean begin = (flags & FrameHeader.FLAG_BEGIN) != 0;

        // A message broken by missing frames counts once: a gap already counted its frames as lost.
        if (begin && end) {
            if (session.reassemblyLength >= 0) {
                if (gap == 0) {
                    session.lostPending++; // a fragmented message lost its tail
                }
                session.reassemblyLength = -1;
            }
            publish(slot, session, buffer, payloadOffset, payloadLength, sessionId, sequence, timestampNs);
            return;
        }
        if (begin) {
            if (session.reassemblyLength >= 0 && gap == 0) {
                session.lostPending++;
            }
            session.reassemblyLength = 0;
            session.reassemblyFirstSequence = sequence;
            session.reassemblyTimestampNs = timestampNs;
        } else if (session.reassemblyLength < 0 || gap > 0) {
            // a middle or end fragment without its beginning: the gap already counted the loss, or we joined
            // the stream in the middle of a message, which is no loss
            session.reassemblyLength = -1;
            skip(slot);
            return;
        }
        if (session.reassemblyLength + payloadLength > topic.maxMessageLength()) {
            countMalformed("reassembled message exceeds maxMessageLength " + topic.maxMessageLength(), length);
            session.lostPending++;
            session.reassemblyLength = -1;
            skip(slot);
            return;
        }
        session.reassembly.putBytes(session.reassemblyLength, buffer, payloadOffset, payloadLength);
        session.reassemblyLength += payloadLength;
        if (end) {
            final int messageLength = session.reassemblyLength;
            session.reassemblyLength = -1;
            publish(slot, session, session.reassembly, 0, messageLength, sessionId, session.reassemblyFirstSequence,
                session.reassemblyTimestampNs);
        }
    }

    /**
     * The session's frame after a suspect decides it: {@code sequence} one past the suspect confirms the jump (the caller
     * counts it in the gap); any other sequence means the suspect was corrupt: counted as malformed. Either way the
     * session has no suspect afterwards. No allocation unless it logs.
     */
    private void decideSuspect(final SessionState session, final int sessionId, final long sequence) {
        final long suspect = session.suspectSequence;
        if (suspect < 0) {
            return;
        }
        session.suspectSequence = -1;
        if (sequence != suspect + 1) {
            final long n = malformed.incrementAndGet();
            if (n <= LOG_FIRST_N || n % LOG_EVERY_N == 0) {
                LOG.warn("topic {}: dropped malformed frame #{}: session {} sequence {} jumped ahead of the expected {} and the "
                    + "session's next frame ({}) did not follow it", topic.name(), n, Integer.toHexString(sessionId), suspect,
                    session.nextSequence, sequence);
            }
        }
    }

    private void recordGap(final SessionState session, final long gap) {
        if (gap > 0) {
            // saturating: a confirmed jump can be near 2^63 (two consecutive frames forged alike), and a counter that
            // wraps negative lies
            gaps.accumulateAndGet(gap, SubscriptionChannel::saturatedAdd);
            session.lostPending = saturatedAdd(session.lostPending, gap);
        }
    }

    private static long saturatedAdd(final long a, final long b) {
        final long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }

    private void publish(final long slot, final SessionState session, final DirectBuffer src, final int srcOffset, final int length,
                         final int sessionId, final long sequence, final long timestampNs) {
        final FrameEvent event = ring.get(slot);
        event.payload.putBytes(0, src, srcOffset, length);
        event.length = length;
        event.sessionId = sessionId;
        event.sequence = sequence;
        event.timestampNs = timestampNs;
        event.lostBefore = session.lostPending;
        session.lostPending = 0;
        ring.publish(slot);
    }

    /** A claimed slot that carries no message (its fragments were lost): the consumer skips it. */
    private void skip(final long slot) {
        if (slot >= 0) {
            ring.get(slot).length = -1;
            ring.publish(slot);
        }
    }

    private void countMalformed(final String why, final int length) {
        final long n = malformed.incrementAndGet();
        if (n <= LOG_FIRST_N || n % LOG_EVERY_N == 0) {
            LOG.warn("topic {}: dropped malformed frame #{} ({} bytes): {}", topic.name(), n, length, why);
        }
    }

    @Override
    public long availableCredits() {
        return ring.remainingCapacity();
    }

    @Override
    public void onTransportError(final Throwable cause) {
        transportError = cause;
        final java.util.function.Consumer<Throwable> log = errorLog;
        if (log != null) {
            log.accept(cause);
        }
    }

    // ---------------------------------------------------------------- delivery side (delivery agent)

    /**
     * @param topic   the topic
     * @param options the subscription's options
     * @return true for best-effort drop-oldest/conflating subscriptions, which emit on their own worker; every other
     *     subscription delivers by demand on the delivery agent
     */
    static boolean emitsOnWorker(final Topic<?> topic, final SubscribeOptions<?> options) {
        return topic.delivery() == Delivery.BEST_EFFORT && options.policy() != SlowConsumerPolicy.BACKPRESSURE;
    }

    /** @return work done */
    int deliver() {
        final FluxSink<Received<T>> out = sink;
        if (out == null || terminated) {
            return 0;
        }
        final Throwable error = transportError;
        if (error != null) {
            terminated = true;
            out.error(error);
            return 1;
        }
        int work = 0;
        if (backpressure) {
            final long demand = out.requestedFromDownstream();
            if (demand <= 0) {
                return 0;
            }
            deliverBudget = Math.min(demand, DELIVERY_BATCH);
            drainSink = out;
            work += drainRing();
            return work;
        }
        deliverBudget = Long.MAX_VALUE;
        work += drainRing();
        if (out.requestedFromDownstream() > 0 && policyBufferNonEmpty() && emitScheduled.compareAndSet(false, true)) {
            emitter.schedule(emitTask);
            work++;
        }
        return work;
    }

    private boolean policyBufferNonEmpty() {
        synchronized (policyLock) {
            return dropOldest != null ? !dropOldest.isEmpty() : !conflated.isEmpty();
        }
    }

    /** On the subscription's worker: emits what the policy kept, as far as demand allows; the agent reschedules. */
    private void emitFromPolicyBuffer() {
        final FluxSink<Received<T>> out = sink;
        try {
            while (out != null && !terminated && out.requestedFromDownstream() > 0) {
                final Received<T> next;
                synchronized (policyLock) {
                    final Received<T> polled = pollPolicyBuffer();
                    next = polled == null ? null : withCarriedLoss(polled);
                }
                if (next == null) {
                    break;
                }
                delivered.incrementAndGet();
                out.next(next);
            }
        } finally {
            emitScheduled.set(false);
        }
    }

    private int drainRing() {
        drainedEvents = 0;
        try {
            poller.poll(drainHandler);
        } catch (final Exception ex) {
            throw new IllegalStateException("ring drain failed for topic " + topic.name(), ex);
        } finally {
            drainSink = null;
        }
        return drainedEvents;
    }

    private boolean onRingEvent(final FrameEvent event, final long sequence, final boolean endOfBatch) {
        drainedEvents++;
        if (event.length < 0) {
            return deliverBudget > 0;
        }
        final T value;
        try {
            value = topic.codec().decode(event.payload, 0, event.length);
        } catch (final CodecException | IndexOutOfBoundsException ex) {
            countMalformed("payload does not decode with codec " + topic.codec().name() + ": " + ex.getMessage(), event.length);
            carry(event.sessionId, 1 + event.lostBefore);
            return deliverBudget > 0;
        }
        final Received<T> received = new Received<>(value, event.sessionId, event.sequence, event.timestampNs, event.lostBefore);
        if (backpressure) {
            if (terminated) {
                return false; // disposed during this drain: the subscriber is gone (releaseSubscriber)
            }
            emit(drainSink, received);
            return --deliverBudget > 0;
        }
        addToPolicyBuffer(received);
        return true;
    }

    private void addToPolicyBuffer(final Received<T> received) {
        synchronized (policyLock) {
            addToPolicyBufferLocked(received);
        }
    }

    private void addToPolicyBufferLocked(final Received<T> received) {
        if (dropOldest != null) {
            if (dropOldest.size() == options.bufferSize()) {
                drop(dropOldest.pollFirst());
            }
            dropOldest.addLast(received);
        } else {
            final Object key = options.conflationKey() == null ? Boolean.TRUE : options.conflationKey().apply(received.value());
            final Received<T> replaced = conflated.put(key, received);
            if (replaced != null) {
                drop(replaced);
            }
        }
    }

    private Received<T> pollPolicyBuffer() {
        if (dropOldest != null) {
            return dropOldest.pollFirst();
        }
        final Iterator<Map.Entry<Object, Received<T>>> it = conflated.entrySet().iterator();
        if (!it.hasNext()) {
            return null;
        }
        final Received<T> first = it.next().getValue();
        it.remove();
        return first;
    }

    private void drop(final Received<T> received) {
        dropped.incrementAndGet();
        carry(received.sessionId(), 1 + received.lostBefore());
    }

    private void carry(final int sessionId, final long lost) {
        synchronized (policyLock) {
            lostCarry.put(sessionId, (int) Math.min(Integer.MAX_VALUE, lostCarry.get(sessionId) + lost));
        }
    }

    /** Adds losses carried for the message's session (drops, undecodable payloads) to its lostBefore. Under policyLock. */
    private Received<T> withCarriedLoss(final Received<T> received) {
        if (lostCarry.isEmpty()) {
            return received;
        }
        final int carried = lostCarry.remove(received.sessionId());
        return carried == 0 ? received : new Received<>(received.value(), received.sessionId(), received.sequence(),
            received.timestampNs(), received.lostBefore() + carried);
    }

    private void emit(final FluxSink<Received<T>> out, final Received<T> received) {
        final Received<T> toEmit;
        synchronized (policyLock) {
            toEmit = withCarriedLoss(received);
        }
        delivered.incrementAndGet();
        out.next(toEmit);
    }

    /** Completes the subscriber; called once the delivery agent has stopped or the channel was removed. */
    void complete() {
        final FluxSink<Received<T>> out = sink;
        if (out != null && !terminated) {
            terminated = true;
            out.complete();
        }
    }

    /**
     * Forgets the subscriber once its subscription is disposed, so it can be collected even while the transport
     * still holds this channel until its own removal command runs (reactive-streams rule 3.13).
     */
    void releaseSubscriber() {
        terminated = true;
        sink = null;
    }

    /** Stops the transport subscription; idempotent. */
    void close() {
        closed = true;
        if (emitter != null) {
            emitter.dispose();
        }
        final TransportSubscription sub = transportSubscription;
        if (sub != null) {
            sub.close();
        }
    }

    /** @param v the counters file's subscription counters, in the order of {@code CountersFile.SUBSCRIPTION_COUNTERS} */
    void sampleCounters(final long[] v) {
        v[0] = framesReceived.get();
        v[1] = bytesReceived.get();
        v[2] = delivered.get();
        v[3] = malformed.get();
        v[4] = gaps.get();
        v[5] = dropped.get();
        v[6] = duplicates.get();
        v[7] = ring.getBufferSize();
        v[8] = ring.remainingCapacity();
    }

    SubscriptionStats stats() {
        return new SubscriptionStats(topic.name(), framesReceived.get(), delivered.get(), malformed.get(), gaps.get(), dropped.get(),
            duplicates.get(), ring.getBufferSize(), ring.remainingCapacity());
    }
}
