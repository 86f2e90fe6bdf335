package io.rdmabus.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import com.lmax.disruptor.EventPoller;
import com.lmax.disruptor.dsl.ProducerType;

import io.rdmabus.BusException;
import io.rdmabus.Delivery;
import io.rdmabus.Received;
import io.rdmabus.SlowConsumerPolicy;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.codec.CodecException;
import io.rdmabus.spi.HostedAgent;
import io.rdmabus.spi.TransportSubscription;

import org.agrona.DirectBuffer;
import org.agrona.collections.Int2IntHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * One subscription: the transport's receive thread validates, sequences and reassembles frames and copies each
 * message into a Disruptor ring; the bus's delivery agent drains the ring as the subscriber's demand allows,
 * decodes, applies the slow-consumer policy and emits into the {@code Flux}. A back-pressure subscription's message
 * that finds the ring empty and the subscriber with demand is emitted directly by the receiving thread instead
 * ({@link #claimForReceive()}), where the threading mode allows: {@code SHARED}, on any receiving thread that refuses
 * blocking (the shared thread, TCP's event loops, the rdma poller); {@code INVOKER}, only inside the application's
 * duty cycle; {@code DEDICATED}, never.
 *
 * <p>Back-pressure subscriptions (all reliable ones) emit on the delivery agent or directly on the receiving thread: a
 * slow subscriber fills the ring, which is the signal that reaches the publisher. Drop-oldest and conflating
 * subscriptions must keep absorbing while their subscriber is busy, so the agent only fills the policy buffer and a
 * per-subscription worker emits from it.
 *
 * <p>Two rings ({@link MessageRing}): the transport's, single-producer, which only the transport's receive side fills
 * (one thread at a time, as {@code SubscriptionSink} promises), so a claim costs no CAS; and, created when the first
 * same-bus publication sends ({@link LocalDelivery}), one that publishers of this bus fill from any thread. Each
 * session's messages come through one of them only, so draining them in turn keeps every session's order.
 *
 * <p>Emitter exclusion ({@link #emitting}): every signal to a back-pressure subscriber (a direct emission, the delivery
 * agent's drain of the ring, the terminal signal) is sent by the one thread that holds the flag, taken with one CAS
 * (per message on the receiving thread, per drain on the agent). Whoever finds it taken does not wait: the receiving
 * thread puts the message into the ring, the agent drains on its next cycle, a terminal signal is left in
 * {@link #pendingTerminal} for the holder to send as it lets go. So onNext signals are serial (Reactive Streams 1.3)
 * and nothing overtakes a message already in the ring: a receiving thread emits directly only into an empty ring, and
 * only it puts its sessions' messages there. Where every signal comes from the bus's own duty cycle (a delivery agent
 * hosted by {@code SHARED} or {@code INVOKER}, and no direct emission from other receiving threads: {@code INVOKER}, or
 * {@code SHARED} over a transport that receives only inside that cycle), the cycle's own exclusion already makes them
 * serial, so the flag is a plain field ({@link #confined}) and taking it costs no atomic operation.
 *
 * @param <T> value type
 */
final class SubscriptionChannel<T> extends FrameReceiver {
    private static final int DELIVERY_BATCH = 256;
    private static final Logger LOG = LoggerFactory.getLogger(SubscriptionChannel.class);
    /** {@link #pendingTerminal}: complete the subscriber. */
    private static final Object COMPLETE = new Object();
    private static final VarHandle EMITTING;

    static {
        try {
            EMITTING = MethodHandles.lookup().findVarHandle(SubscriptionChannel.class, "emitting", int.class);
        } catch (final ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final Topic<T> typedTopic;
    private final SubscribeOptions<T> options;
    private final boolean backpressure;
    /** The transport's messages: filled by its receive side only (single producer). */
    private final MessageRing ring;
    /** Same-bus publishers' messages ({@link LocalDelivery}): multi-producer, created on first use; or null. */
    private volatile MessageRing localRing;
    /** The delivery agent's host, to tell whether the receiving thread is the delivering one; null: never emit directly. */
    private final HostedAgent deliveryHost;
    /** The delivering thread's idle strategy, to wake when the ring turns non-empty; null: nothing to wake. */
    private final WakeableIdleStrategy deliveryWake;
    /** SHARED: also emit directly on a receiving thread other than the delivering one, if it refuses blocking. */
    private final boolean fromReceivingThreads;

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
    /** Which ring a drain takes first, turn about, so neither starves the other. Delivering thread. */
    private boolean localFirst;

    /** Emitter exclusion: 1 while one thread signals the subscriber (see the class comment). */
    @SuppressWarnings("unused") // through EMITTING
    private volatile int emitting;
    /**
     * True where every signal is sent inside the bus's duty cycle (the class comment): the emitter flag is then
     * {@link #emittingInCycle}, not {@link #emitting}.
     */
    private final boolean confined;
    /** The emitter flag of a {@link #confined} channel. Owner: the thread inside the bus's duty cycle. */
    private boolean emittingInCycle;
    /** The terminal signal to send ({@link #COMPLETE} or the error), left here for the emitter-flag's holder; or null. */
    private volatile Object pendingTerminal;
    /**
     * The thread inside {@link #emitDirect}, i.e. inside the transport's receive loop, else null. Plain: only the thread
     * that wrote its own name can read it back ({@link #close()} compares it with the caller).
     */
    private Thread directEmitter;
    /** A close asked for inside a direct emission, left to {@link #finishClose()} (handed over by the agent's command queue). */
    private volatile boolean closeDeferred;

    /** Written by the one thread that emits (the holder of the emitter flag, or the policy worker), one at a time. */
    private final AtomicLong delivered = new AtomicLong();
    /** Same-bus messages ({@link LocalDelivery}) and their payload bytes: written by any publisher thread of the bus. */
    private final AtomicLong localMessages = new AtomicLong();
    private final AtomicLong localBytes = new AtomicLong();

    volatile FluxSink<Received<T>> sink;
    /** The sink read once by {@link #deliver()} for the current drain, so a concurrent dispose cannot null it mid-drain. */
    private FluxSink<Received<T>> drainSink;
    volatile TransportSubscription transportSubscription;
    /** Where a transport error that ends this subscription is recorded too (the bus's counters file), or null. */
    volatile Consumer<Throwable> errorLog;
    /** Where an exception thrown by the subscriber's onNext goes (the bus's agent errors); null: logged here. */
    volatile Consumer<Throwable> subscriberErrors;
    /** Disposes this subscription as a cancel does (the bus's own disposal); run when onNext throws. Null: none. */
    volatile Runnable cancelAction;
    private volatile Throwable transportError;
    private volatile boolean terminated;

    /**
     * @param emitter where drop-oldest/conflating subscriptions emit; unused for back-pressure ones (may be null)
     */
    SubscriptionChannel(final Topic<T> topic, final SubscribeOptions<T> options, final int maxFrameLength, final Scheduler.Worker emitter) {
        this(topic, options, maxFrameLength, emitter, null, null, false);
    }

    /**
     * @param emitter              where drop-oldest/conflating subscriptions emit; unused for back-pressure ones (may be null)
     * @param deliveryHost         the delivery agent as hosted by the bus, whose {@link HostedAgent#onAgentThread()} says
     *                             whether a frame arrives on the delivering thread (direct emission); null for never
     * @param deliveryWake         the delivering thread's idle strategy, woken when a message lands in the empty ring; or null
     * @param fromReceivingThreads true ({@code SHARED}): emit directly also on another receiving thread, if it carries
     *                             Reactor's {@code NonBlocking} marker; false: only on the delivering thread
     */
    SubscriptionChannel(final Topic<T> topic, final SubscribeOptions<T> options, final int maxFrameLength, final Scheduler.Worker emitter,
                        final HostedAgent deliveryHost, final WakeableIdleStrategy deliveryWake, final boolean fromReceivingThreads) {
        super(topic, maxFrameLength);
        this.typedTopic = topic;
        this.options = options;
        this.backpressure = !emitsOnWorker(topic, options);
        this.ring = new MessageRing(ProducerType.SINGLE, options.ringSize(), deliveryWake);
        this.dropOldest = !backpressure && options.policy() == SlowConsumerPolicy.DROP_OLDEST ? new ArrayDeque<>(options.bufferSize()) : null;
        this.conflated = !backpressure && options.policy() == SlowConsumerPolicy.CONFLATE_LATEST ? new LinkedHashMap<>() : null;
        if (!backpressure && emitter == null) {
            throw new IllegalArgumentException("a " + options.policy() + " subscription needs an emitting worker");
        }
        this.emitter = backpressure ? null : emitter;
        this.deliveryHost = backpressure ? deliveryHost : null;
        this.deliveryWake = deliveryWake;
        this.fromReceivingThreads = fromReceivingThreads;
        // a hosted delivery agent (SHARED, INVOKER) and direct emission only on its thread: all inside the duty cycle
        this.confined = this.deliveryHost != null && !fromReceivingThreads;
    }

    // ---------------------------------------------------------------- receive side (transport thread)

    @Override
    long tryClaim() {
        return ring.tryClaim();
    }

    /**
     * Direct emission: when the transport receives on a thread that may emit ({@link #mayEmitOnThisThread}), the ring
     * holds nothing and the subscriber has demand, and this thread takes the emitter flag, the message skips the ring:
     * {@link #publish} decodes it from the transport's buffer and emits it at once, then lets the flag go. Anything in
     * the ring goes first, so the order holds; without demand, or with the flag taken (the agent is draining), the ring
     * is the buffer as before. The demand is read again once the flag is held: only then can nobody else consume it.
     */
    @Override
    long claimForReceive() {
        final HostedAgent host = deliveryHost;
        // a thread that may not emit reads nothing the delivering thread writes (the ring's consumer sequence, the demand)
        if (host != null && mayEmitOnThisThread(host) && ring.isDrainedForProducer()) { // the same-bus ring: other sessions, no order to keep
            final FluxSink<Received<T>> out = sink;
            if (out != null && !terminated && transportError == null && pendingTerminal == null && out.requestedFromDownstream() > 0
                && tryAcquireEmitter()) {
                // once the flag is held nobody else can consume the demand; a confined channel's signals all come from
                // this thread, so what it read above still holds
                if (confined || !terminated && out.requestedFromDownstream() > 0) {
                    directEmitter = Thread.currentThread();
                    return DIRECT;
                }
                releaseEmitter();
            }
        }
        return tryClaim();
    }

    /** @return true if neither ring holds a message (the emitter's drain has nothing to take) */
    private boolean ringsEmpty() {
        final MessageRing local = localRing;
        return ring.isEmpty() && (local == null || local.isEmpty());
    }

    /**
     * @return true on the delivering thread (inside the bus's duty cycle), and in {@code SHARED} mode also on any thread
     *     that carries Reactor's {@code NonBlocking} marker (TCP's event loops, the rdma poller), so a subscriber that
     *     blocks there fails at once as it would on the delivery thread
     */
    private boolean mayEmitOnThisThread(final HostedAgent host) {
        return fromReceivingThreads && Schedulers.isInNonBlockingThread() || host.onAgentThread();
    }

    @Override
    void publish(final long slot, final DirectBuffer src, final int srcOffset, final int length, final int sessionId, final long sequence,
                 final long timestampNs, final long lostBefore) {
        if (slot == DIRECT) {
            emitDirect(src, srcOffset, length, sessionId, sequence, timestampNs, lostBefore);
            return;
        }
        ring.publish(slot, src, srcOffset, length, sessionId, sequence, timestampNs, lostBefore);
    }

    /** @return the same-bus ring, created on first use (any publisher thread of the bus) */
    private MessageRing localRing() {
        final MessageRing local = localRing;
        return local != null ? local : createLocalRing();
    }

    private synchronized MessageRing createLocalRing() {
        if (localRing == null) {
            localRing = new MessageRing(ProducerType.MULTI, options.ringSize(), deliveryWake);
        }
        return localRing;
    }

    /** A same-bus publisher's claim ({@link LocalDelivery}), on its thread: @return a slot of the same-bus ring, or {@link #NO_ROOM} */
    long tryClaimLocal() {
        return localRing().tryClaim();
    }

    /** @return free slots of the same-bus ring (a ring not yet created has all of them) */
    long localCredits() {
        final MessageRing local = localRing;
        return local == null ? options.ringSize() : local.remainingCapacity();
    }

    /**
     * A message of a publication of the same bus ({@link LocalDelivery}), on that publisher's thread: into a slot it
     * claimed with {@link #tryClaimLocal()}. Counted as one frame received.
     */
    void publishLocal(final long slot, final DirectBuffer src, final int srcOffset, final int length, final int sessionId,
                      final long sequence, final long timestampNs, final long lostBefore) {
        localMessages.incrementAndGet();
        localBytes.addAndGet(length);
        localRing.publish(slot, src, srcOffset, length, sessionId, sequence, timestampNs, lostBefore);
    }

    /** A same-bus slot claimed with {@link #tryClaimLocal()} that carries no message (the publication's offer failed). */
    void skipLocal(final long slot) {
        localRing.skip(slot);
    }

    /**
     * Decodes a message (the codec never returns null); one that does not decode is counted as malformed and its loss
     * carried to the session's next message.
     *
     * @return the value, or null if it did not decode
     */
    private T decodeOrCount(final DirectBuffer src, final int offset, final int length, final int sessionId, final long lostBefore) {
        try {
            return typedTopic.codec().decode(src, offset, length);
        } catch (final CodecException | IndexOutOfBoundsException ex) {
            countMalformed("payload does not decode with codec " + topic.codec().name() + ": " + ex.getMessage(), length);
            carry(sessionId, 1 + lostBefore);
            return null;
        }
    }

    /** On the receiving thread, for a {@link #DIRECT} claim (emitter flag held): decodes in the transport's buffer and emits. */
    private void emitDirect(final DirectBuffer src, final int srcOffset, final int length, final int sessionId, final long sequence,
                            final long timestampNs, final long lostBefore) {
        try {
            final T value = decodeOrCount(src, srcOffset, length, sessionId, lostBefore);
            final FluxSink<Received<T>> out = sink;
            if (value != null && out != null && !terminated) { // else undecodable (counted), or disposed since the claim
                emit(out, new Received<>(value, sessionId, sequence, timestampNs, lostBefore));
            }
        } finally {
            endDirect();
        }
    }

    /** Lets the flag of a {@link #DIRECT} claim go; a terminal signal it sends on the way is still inside the receive loop. */
    private void endDirect() {
        try {
            releaseEmitter();
        } finally {
            directEmitter = null;
        }
    }

    @Override
    void skip(final long slot) {
        if (slot == DIRECT) {
            endDirect();
            return;
        }
        ring.skip(slot);
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

    /**
     * A back-pressure subscription's drain takes the emitter flag once; if a receiving thread holds it (emitting
     * directly), the ring waits for the next cycle, which the work reported keeps close.
     *
     * @return work done
     */
    int deliver() {
        final FluxSink<Received<T>> out = sink;
        if (out == null || terminated) {
            return 0;
        }
        final Throwable error = transportError;
        if (error != null) {
            signalTerminal(error);
            return 1;
        }
        int work = 0;
        if (backpressure) {
            if (out.requestedFromDownstream() <= 0 || ringsEmpty()) {
                return 0;
            }
            if (!tryAcquireEmitter()) {
                return 1; // a receiving thread emits directly right now: the ring's messages go on the next cycle
            }
            try {
                final long demand = out.requestedFromDownstream(); // again, under the flag: a direct emission may have used some
                if (demand <= 0 || terminated) {
                    return 0;
                }
                deliverBudget = Math.min(demand, DELIVERY_BATCH);
                drainSink = out;
                work += drainRing();
                return work;
            } finally {
                releaseEmitter();
            }
        }
        deliverBudget = Long.MAX_VALUE;
        work += drainRing();
        if (out.requestedFromDownstream() > 0 && policyBufferNonEmpty() && emitScheduled.compareAndSet(false, true)) {
            emitter.schedule(emitTask);
            work++;
        }
        return work;
    }

    /**
     * @return true if messages wait for this subscriber's demand (in the ring, or in the policy buffer): the delivery
     *     agent finds the demand only by looking, so its thread must not sleep long meanwhile (delivery agent's thread)
     */
    boolean waitsForDemand() {
        final FluxSink<Received<T>> out = sink;
        if (out == null || terminated || out.requestedFromDownstream() > 0) {
            return false;
        }
        return backpressure ? !ringsEmpty() : policyBufferNonEmpty();
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
                increment(delivered);
                out.next(next);
            }
        } finally {
            emitScheduled.set(false);
        }
    }

    /** Drains both rings, the one that went second last time first, within {@link #deliverBudget}. */
    private int drainRing() {
        drainedEvents = 0;
        try {
            final MessageRing local = localRing;
            if (local == null) {
                ring.poll(drainHandler);
            } else {
                localFirst = !localFirst;
                final MessageRing first = localFirst ? local : ring;
                first.poll(drainHandler);
                if (deliverBudget > 0) {
                    (first == ring ? local : ring).poll(drainHandler);
                }
            }
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
        final T value = decodeOrCount(event.payload, 0, event.length, event.sessionId, event.lostBefore);
        if (value == null) {
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

    /**
     * Back-pressure subscriptions only, under the emitter flag: their carried losses are read and written only by the
     * flag's holder, so no lock. A subscriber whose onNext throws breaks rule 2.13: its subscription counts as cancelled
     * (no further signal, the bus disposes it as a cancel would) and the exception goes to the bus's error handler; the
     * message counts as delivered, and the ring moves on (it is never offered again).
     */
    private void emit(final FluxSink<Received<T>> out, final Received<T> received) {
        final Received<T> toEmit = withCarriedLoss(received);
        increment(delivered);
        try {
            out.next(toEmit);
        } catch (final RuntimeException ex) {
            onNextThrew(toEmit, ex);
        }
    }

    private void onNextThrew(final Received<T> received, final RuntimeException ex) {
        terminated = true;
        final BusException error = new BusException("subscriber of topic '" + topic.name() + "' threw from onNext on session "
            + Integer.toHexString(received.sessionId()) + " sequence " + received.sequence() + " (its subscription is cancelled, "
            + "Reactive Streams rule 2.13): " + ex, ex);
        final Consumer<Throwable> errors = subscriberErrors;
        if (errors != null) {
            errors.accept(error);
        } else {
            LOG.error("{}", error.getMessage(), ex);
        }
        final Runnable cancel = cancelAction;
        if (cancel != null) {
            cancel.run();
        }
    }

    // ---------------------------------------------------------------- emitter exclusion

    private boolean tryAcquireEmitter() {
        if (confined) {
            if (emittingInCycle) {
                return false; // taken further up this thread's stack: a signal asked for inside onNext
            }
            emittingInCycle = true;
            return true;
        }
        return EMITTING.compareAndSet(this, 0, 1);
    }

    /**
     * Lets the emitter flag go, then sends a terminal signal left while it was held. A volatile store, not an ordered
     * one: with {@link #signalTerminal} (which writes {@link #pendingTerminal}, then tries the flag) either that thread
     * gets the flag or this one sees the signal. A {@link #confined} channel's signals all come from one thread at a
     * time, so a plain store does.
     */
    private void releaseEmitter() {
        clearEmitterFlag();
        if (pendingTerminal != null && !terminated) {
            emitPendingTerminal();
        }
    }

    /** Lets the emitter flag go, the plain one or the shared one, whichever this channel takes. */
    private void clearEmitterFlag() {
        if (confined) {
            emittingInCycle = false;
        } else {
            emitting = 0;
        }
    }

    /** Completes ({@link #COMPLETE}) or fails the subscriber now, or, if another thread is signalling it, as that thread lets go. */
    private void signalTerminal(final Object signal) {
        if (pendingTerminal == null) {
            pendingTerminal = signal;
        }
        emitPendingTerminal();
    }

    private void emitPendingTerminal() {
        if (!tryAcquireEmitter()) {
            return; // the holder sends it as it lets go
        }
        try {
            final Object signal = pendingTerminal;
            final FluxSink<Received<T>> out = sink;
            if (signal != null && out != null && !terminated) {
                terminated = true;
                if (signal instanceof Throwable error) {
                    out.error(error);
                } else {
                    out.complete();
                }
            }
        } finally {
            clearEmitterFlag(); // the last signal: nothing is left to send
        }
    }

    /** Completes the subscriber; called once the delivery agent has stopped or the channel was removed. */
    void complete() {
        if (sink != null && !terminated) {
            signalTerminal(COMPLETE);
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

    /**
     * Stops the transport subscription; idempotent. Called by a subscriber that cancels inside a direct emission (on the
     * receiving thread), it only stops taking frames: the transport is inside its receive loop over this subscription,
     * so closing it there would change that loop under it; the delivery agent's removal command finishes the close
     * ({@link #finishClose()}). From any other thread it closes at once.
     */
    void close() {
        closed = true;
        if (emitter != null) {
            emitter.dispose();
        }
        if (directEmitter == Thread.currentThread()) {
            closeDeferred = true;
            return;
        }
        final TransportSubscription sub = transportSubscription;
        if (sub != null) {
            sub.close();
        }
    }

    /** On the delivery agent, when it removes this channel: a close deferred by {@link #close()} happens now. */
    void finishClose() {
        if (closeDeferred) {
            closeDeferred = false;
            final TransportSubscription sub = transportSubscription;
            if (sub != null) {
                sub.close();
            }
        }
    }

    /** @param v the counters file's subscription counters, in the order of {@code CountersFile.SUBSCRIPTION_COUNTERS} */
    void sampleCounters(final long[] v) {
        v[0] = framesReceived.get() + localMessages.get();
        v[1] = bytesReceived.get() + localBytes.get();
        v[2] = delivered.get();
        v[3] = malformed.get();
        v[4] = gaps.get();
        v[5] = dropped.get();
        v[6] = duplicates.get();
        v[7] = ringCapacity();
        v[8] = ringFree();
        v[9] = sessionsForgotten.get();
    }

    SubscriptionStats stats() {
        return new SubscriptionStats(topic.name(), framesReceived.get() + localMessages.get(), delivered.get(), malformed.get(), gaps.get(), dropped.get(),
            duplicates.get(), ringCapacity(), ringFree());
    }

    /** @return slots of both rings (the same-bus one once created) */
    private int ringCapacity() {
        final MessageRing local = localRing;
        return ring.capacity() + (local == null ? 0 : local.capacity());
    }

    /** @return free slots of both rings */
    private long ringFree() {
        final MessageRing local = localRing;
        return ring.remainingCapacity() + (local == null ? 0 : local.remainingCapacity());
    }
}
