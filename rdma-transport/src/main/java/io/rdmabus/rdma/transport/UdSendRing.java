package io.rdmabus.rdma.transport;

import io.rdmabus.rdma.verbs.SendRequestList;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The UD QP's data sends by post sequence, for one {@code ibv_post_send} per frame (a post list with one datagram per
 * destination) or per batch of frames, and selective signalling. The data wr_id carries the low 28 bits of the post
 * sequence ({@link WorkRequestId#ofUdSend}). A UD send queue completes its work requests in order, so any completion of a data
 * send (a signalled one, or an error or flush completion, which the device generates for unsignalled ones too)
 * releases it and every data send posted before it: their publication slot references and their place in
 * {@link UdEndpoint#outstanding}.
 *
 * <p>Signalling: a frame whose datagrams read the publication's slot at send time (too big to go inline) has its last
 * datagram signalled, so the slot returns as soon as the device is done with it. Inline datagrams (copied into the
 * work request at post time) hold no slot: one in {@link #SIGNAL_INTERVAL} is signalled. The unsignalled tail of a
 * burst only keeps up to {@code SIGNAL_INTERVAL - 1} places counted in {@link UdEndpoint#outstanding} until the next
 * completion, a quarter of the send queue depth, so the queue never overflows and never looks full when it is not
 * (the device frees an unsignalled request's place only with a later signalled one's completion, so they are taken).
 * The interval is as long as that allows because every completion costs the publisher's host a poller wake-up (and
 * the poller's yield window after it): on one emulated vCPU that was a fifth of the CPU at one in 32.
 *
 * <p>Threads: publisher threads post under this object's monitor ({@link #post}); the poller releases under it
 * ({@link #onCompletion}). The ring itself is preallocated (no allocation per frame).
 */
final class UdSendRing {
    /** An inline data send is signalled once in this many (a quarter of {@link UdEndpoint#SEND_QUEUE_DEPTH}). */
    static final int SIGNAL_INTERVAL = UdEndpoint.SEND_QUEUE_DEPTH / 4;
    /** The ring entry of an inline datagram: it holds no publication slot. */
    static final long NO_SLOT = -1;

    /** One {@code ibv_post_send} of a list: the UD QP's {@code QueuePair::postSend} (a recorder in the host test). */
    @FunctionalInterface
    interface Poster {
        /** @return 0 (all posted) or an errno value, with the list's {@code failedIndex} naming the refused request */
        int postSend(SendRequestList list);
    }

    private static final long SEQ_MASK = WorkRequestId.SEQUENCE_MASK;

    private final AtomicReferenceArray<UdPublication> pools;
    private final AtomicInteger outstanding;
    /** Per post sequence: publication pool index << 16 | slot, or {@link #NO_SLOT} for an inline send. */
    private final long[] ring;
    private final int mask;
    private long postedSeq;
    private long releasedSeq;
    private int sinceSignal;

    /**
     * @param depth       the send queue depth (unreleased sends never exceed it: {@code outstanding} bounds them)
     * @param pools       the endpoint's publications by pool index
     * @param outstanding the endpoint's count of send queue places taken
     */
    UdSendRing(final int depth, final AtomicReferenceArray<UdPublication> pools, final AtomicInteger outstanding) {
        this.pools = pools;
        this.outstanding = outstanding;
        this.ring = new long[Integer.highestOneBit(Math.max(64, depth * 2) - 1) << 1];
        this.mask = ring.length - 1;
    }

    /** @return the ring entry of a datagram that reads {@code slot} of publication {@code poolIndex} at send time */
    static long slotEntry(final int poolIndex, final int slot) {
        return ((long) poolIndex << 16) | (slot & 0xFFFF);
    }

    /**
     * Posts {@code list} (the datagrams of one frame, or of several frames of one publication's batch) with one
     * {@code ibv_post_send}: gives each its wr_id, chooses which are signalled, and records the posted ones.
     *
     * @param entries per request of the list: {@link #slotEntry} if it reads its publication's slot at send time (not
     *                inline; the slot's reference count includes it), else {@link #NO_SLOT}. A frame's datagrams are
     *                consecutive, so the last of a slot-holding frame is the one whose successor has another entry.
     * @return datagrams posted: on an error, those before the one {@code bad_wr} names (the rest were not posted)
     */
    synchronized int post(final Poster poster, final SendRequestList list, final long[] entries) {
        final int n = list.count();
        if (n == 0 || postedSeq + n - releasedSeq > ring.length) {
            return 0; // cannot happen while outstanding bounds the sends in flight: refuse rather than overwrite
        }
        int since = sinceSignal;
        for (int i = 0; i < n; i++) {
            final boolean framesLast = entries[i] != NO_SLOT && (i == n - 1 || entries[i + 1] != entries[i]);
            final boolean signaled = framesLast || since + 1 >= SIGNAL_INTERVAL;
            list.wrId(i, WorkRequestId.ofUdSend(postedSeq + i));
            list.signal(i, signaled);
            since = signaled ? 0 : since + 1;
        }
        int posted;
        try {
            posted = poster.postSend(list) == 0 ? n : Math.max(0, list.failedIndex());
        } catch (RuntimeException e) {
            posted = 0; // the QP closed under us (transport closing): nothing went out
        }
        for (int i = 0; i < posted; i++) {
            ring[(int) (postedSeq + i) & mask] = entries[i];
            sinceSignal = list.signaled(i) ? 0 : sinceSignal + 1;
        }
        postedSeq += posted;
        return posted;
    }

    /** A data send's completion (any status): releases it and every data send posted before it (poller thread). */
    synchronized void onCompletion(final long seqBits) {
        final long pending = postedSeq - releasedSeq;
        final long delta = (seqBits - releasedSeq) & SEQ_MASK;
        if (delta >= pending) {
            return; // released already
        }
        final long end = releasedSeq + delta + 1;
        for (long s = releasedSeq; s < end; s++) {
            final long entry = ring[(int) s & mask];
            if (entry != NO_SLOT) {
                final UdPublication p = pools.get((int) (entry >>> 16) & 0xFFF);
                if (p != null) {
                    p.onSendComplete((int) entry & 0xFFFF);
                }
            }
            outstanding.decrementAndGet();
        }
        releasedSeq = end;
    }

    /** @return data sends posted and not released yet (diagnostics) */
    synchronized long unreleased() {
        return postedSeq - releasedSeq;
    }
}
