package io.rdmabus.core;

import com.lmax.disruptor.EventPoller;
import com.lmax.disruptor.InsufficientCapacityException;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.ProducerType;

import org.agrona.DirectBuffer;

/**
 * One of a subscription's rings of whole messages ({@link SubscriptionChannel}): producers claim a slot, copy a message
 * into it and publish it; the delivering thread polls. A message published while the delivering thread parks wakes it.
 *
 * <p>Producers: a {@link ProducerType#SINGLE single}-producer ring takes one thread at a time (the transport's receive
 * side, as {@code SubscriptionSink} promises), and claims with plain loads and stores; a
 * {@link ProducerType#MULTI multi}-producer one takes any threads at once (same-bus publishers) and claims with a CAS
 * on its cursor. Consumer: the one thread that delivers (the emitter flag's holder, or the delivery agent).
 */
final class MessageRing {
    /** From {@link #tryClaim()}: no room. */
    static final long NO_ROOM = FrameReceiver.NO_ROOM;

    private final RingBuffer<FrameEvent> ring;
    private final EventPoller<FrameEvent> poller;
    /** The delivering thread's idle strategy, woken when a message lands in the empty ring; or null. */
    private final WakeableIdleStrategy deliveryWake;
    private final boolean singleProducer;
    /**
     * A single-producer ring's: true from its producer's first publication until {@link #isDrainedForProducer()} finds
     * the ring drained again. Owner: the producing thread (one at a time, and a thread that takes over has seen its
     * predecessor's writes, as {@code SubscriptionSink} requires of a transport). Written only when it changes, so a
     * producer that hands every message over through the ring writes it once: a store per message here would take
     * the line the delivering thread reads this object's fields from.
     */
    private boolean inUse;

    MessageRing(final ProducerType producers, final int size, final WakeableIdleStrategy deliveryWake) {
        this.ring = RingBuffer.create(producers, FrameEvent::new, size, PolledRingWaitStrategy.INSTANCE);
        this.poller = ring.newPoller();
        ring.addGatingSequences(poller.getSequence());
        this.deliveryWake = deliveryWake;
        this.singleProducer = producers == ProducerType.SINGLE;
    }

    /** @return a slot to fill, or {@link #NO_ROOM} */
    long tryClaim() {
        try {
            return ring.tryNext();
        } catch (final InsufficientCapacityException ex) {
            return NO_ROOM;
        }
    }

    /** Fills a claimed slot with a message and publishes it; {@code src} is read only during the call. */
    void publish(final long slot, final DirectBuffer src, final int srcOffset, final int length, final int sessionId, final long sequence,
                 final long timestampNs, final long lostBefore) {
        final FrameEvent event = ring.get(slot);
        event.payload.putBytes(0, src, srcOffset, length);
        event.length = length;
        event.sessionId = sessionId;
        event.sequence = sequence;
        event.timestampNs = timestampNs;
        event.lostBefore = lostBefore;
        markInUse();
        ring.publish(slot);
        if (deliveryWake != null) {
            deliveryWake.wake(); // reads one field, which the delivering thread writes only around its parks
        }
    }

    /** Publishes a claimed slot that carries no message; the drain passes over it. */
    void skip(final long slot) {
        ring.get(slot).length = -1;
        markInUse();
        ring.publish(slot);
    }

    /** Before a slot is published: until {@link #isDrainedForProducer()} finds the ring empty again, it asks the ring. */
    private void markInUse() {
        if (singleProducer && !inUse) {
            inUse = true;
        }
    }

    /**
     * @return true if the delivering side has taken everything published; in a multi-producer ring a slot claimed and
     *     not yet published counts as not empty (the drain then finds nothing to take)
     */
    boolean isEmpty() {
        return poller.getSequence().get() == ring.getCursor();
    }

    /**
     * As {@link #isEmpty()}, on a producing thread. On a {@link ProducerType#SINGLE single}-producer ring, while the
     * producer has published nothing since it last found the ring drained, the ring is empty without a look at the
     * cursor and the consumer's sequence (a chain of dependent loads, at every message of a direct emission). A
     * multi-producer ring has no flag (no one producer owns it) and looks every time.
     */
    boolean isDrainedForProducer() {
        if (!singleProducer) {
            return isEmpty();
        }
        if (!inUse) {
            return true;
        }
        if (!isEmpty()) {
            return false;
        }
        inUse = false;
        return true;
    }

    /** Delivering thread: hands the published events to the handler in order, as long as it answers true. */
    void poll(final EventPoller.Handler<FrameEvent> handler) throws Exception {
        poller.poll(handler);
    }

    int capacity() {
        return ring.getBufferSize();
    }

    long remainingCapacity() {
        return ring.remainingCapacity();
    }
}
