package io.rdmabus.core;

import com.lmax.disruptor.EventPoller;
import com.lmax.disruptor.InsufficientCapacityException;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
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
    /** The delivering side's sequence: the last slot it took. */
    private final Sequence consumed;
    /**
     * A single-producer ring's last published (or skipped) slot, as its producer knows it; -1 in a multi-producer ring.
     * Written and read by the producing thread only (plain, as the Disruptor's single-producer sequencer keeps its own
     * claim state: one thread at a time, and a thread that takes over has seen its predecessor's writes, as
     * {@code SubscriptionSink} requires of a transport), so {@link #isEmptyForProducer()} reads one field besides the
     * consumer's sequence, not the cursor through the sequencer (three dependent loads at every message).
     */
    private long producedByProducer = -1;
    private final boolean singleProducer;
    /** The delivering thread's idle strategy, woken when a message lands in the empty ring; or null. */
    private final WakeableIdleStrategy deliveryWake;

    MessageRing(final ProducerType producers, final int size, final WakeableIdleStrategy deliveryWake) {
        this.ring = RingBuffer.create(producers, FrameEvent::new, size, PolledRingWaitStrategy.INSTANCE);
        this.poller = ring.newPoller();
        this.consumed = poller.getSequence();
        this.singleProducer = producers == ProducerType.SINGLE;
        ring.addGatingSequences(consumed);
        this.deliveryWake = deliveryWake;
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
        if (singleProducer) {
            producedByProducer = slot;
        }
        ring.publish(slot);
        if (deliveryWake != null) {
            deliveryWake.wake(); // reads one field, which the delivering thread writes only around its parks
        }
    }

    /** Publishes a claimed slot that carries no message; the drain passes over it. */
    void skip(final long slot) {
        ring.get(slot).length = -1;
        if (singleProducer) {
            producedByProducer = slot;
        }
        ring.publish(slot);
    }

    /**
     * @return true if the delivering side has taken everything published; in a multi-producer ring a slot claimed and
     *     not yet published counts as not empty (the drain then finds nothing to take)
     */
    boolean isEmpty() {
        return consumed.get() == ring.getCursor();
    }

    /** As {@link #isEmpty()}, on a {@link ProducerType#SINGLE single}-producer ring's producing thread only. */
    boolean isEmptyForProducer() {
        return consumed.get() == producedByProducer;
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
