package io.rdmabus.rdma.transport;

import io.rdmabus.frame.FrameHeader;

import java.util.ArrayList;
import java.util.List;

import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Gap recovery, subscriber side: per UD stream (topic id, publisher session) it watches the sequence; on a gap it holds
 * the later frames (copies, at most {@code rdma.ud.recovery.frames} per stream), sends the publisher one NAK for the
 * missing ones over the RC connection they share (found from the datagram's source address and QP number, as announced
 * in the publisher's UD_INFO), fills the gap from the RECOVERED frames, and delivers in sequence order. A missing frame
 * still absent {@code rdma.ud.recovery.ms} after its NAK is given up: the frames after it are delivered and the bus
 * sees the jump and reports it as loss ({@code lostBefore}), exactly as without recovery. Nothing reaches the sinks
 * twice (a held or recovered copy of a frame already there is dropped) or out of order (while a stream holds, every
 * datagram of it goes through the hold).
 *
 * <p>Not recovered (delivered at once, loss reported as before): a gap of {@code rdma.ud.recovery.frames} frames or more,
 * a stream whose publisher has no live RC connection here, a frame whose header does not parse (the bus counts it).
 *
 * <p>Owner: the poller thread (UD receives, RC receives and the duty cycle all run on it). Allocates once per stream
 * (its state, and its hold buffer at its first gap), never per frame.
 */
final class UdRecoveryReceiver {
    /** Delivers a frame to the local subscriptions of its topic, counted as a UD delivery ({@link UdEndpoint#offer}). */
    interface Delivery {
        void offer(RdmaSubscription[] subs, DirectBuffer buffer, int offset, int length);
    }

    /** Where a stream's NAKs go: the publisher's RC connection ({@link ConnectionTarget}; a host test gives its own). */
    interface NakTarget {
        /** @return whether a NAK can go out now */
        boolean live();

        /** Queues a NAK of {@code count} frames of session {@code session} of {@code topicId} from {@code first} on. */
        void nak(int topicId, int session, long first, int count);
    }

    /** The NAK target of a publisher's RC connection: its control queue (sent by the poller's next flush). */
    record ConnectionTarget(Connection c) implements NakTarget {
        @Override
        public boolean live() {
            return c.live();
        }

        @Override
        public void nak(final int topicId, final int session, final long first, final int count) {
            c.pendingControl.nak(topicId, session, first, count);
        }
    }

    private final int window;
    private final long boundNs;
    private final int stride;
    private final Delivery delivery;
    /** Streams by (topic id &lt;&lt; 32 | session id). */
    private final Long2ObjectHashMap<Stream> streams = new Long2ObjectHashMap<>();
    /** Publishers' RC connections by their UD address (IPv4 &lt;&lt; 32 | QP number), from UD_INFO. */
    private final Long2ObjectHashMap<NakTarget> publishers = new Long2ObjectHashMap<>();
    /** Streams holding frames now. */
    private final List<Stream> holding = new ArrayList<>();

    // counters (written by the poller only, read racily by counters())
    private volatile long gapFrames;
    private volatile long naksSent;
    private volatile long recovered;
    private volatile long givenUp;
    private volatile long notRecoverable;
    private volatile long filledByUd;
    private volatile long duplicatesDropped;

    /**
     * @param window        frames held per stream at most ({@code rdma.ud.recovery.frames})
     * @param boundNs       how long a missing frame is waited for after its NAK
     * @param maxFrameBytes the largest best-effort frame
     * @param delivery      hands frames to the sinks
     */
    UdRecoveryReceiver(final int window, final long boundNs, final int maxFrameBytes, final Delivery delivery) {
        this.window = window;
        this.boundNs = boundNs;
        this.stride = maxFrameBytes;
        this.delivery = delivery;
    }

    /** A peer announced its UD address on {@code c}: NAKs for its streams go there. */
    void onPeerInfo(final Connection c, final int peerQpn, final int peerIpv4) {
        onPeer(addressKey(peerIpv4, peerQpn), new ConnectionTarget(c));
    }

    /** NAKs for the streams of the UD sender at {@code source} ({@link #addressKey}) go to {@code target}. */
    void onPeer(final long source, final NakTarget target) {
        publishers.put(source, target);
    }

    /** Connection {@code c} is gone: no NAK goes to it (its streams' gaps time out). */
    void forget(final Connection c) {
        publishers.values().removeIf(t -> t instanceof ConnectionTarget ct && ct.c() == c);
    }

    static long addressKey(final int ipv4, final int qpn) {
        return ((long) ipv4 << 32) | (qpn & 0xFF_FFFFL);
    }

    /**
     * A UD datagram's frame for {@code topicId}, whose local subscriptions are {@code subs} (poller).
     *
     * @param source the sender's {@link #addressKey}
     * @return true if this took it (held, delivered or dropped), false if the caller delivers it at once as always
     */
    boolean onDatagram(final int topicId, final RdmaSubscription[] subs, final DirectBuffer buffer, final int offset, final int length,
                       final long source, final Int2ObjectHashMap<RdmaSubscription[]> local) {
        if (length < FrameHeader.LENGTH || length > stride || FrameHeader.topicId(buffer, offset) != topicId) {
            return false;
        }
        final long seq = FrameHeader.sequence(buffer, offset);
        if (seq < 0) {
            return false;
        }
        final int session = FrameHeader.sessionId(buffer, offset);
        final long key = ReliableResume.resumeKey(topicId, session);
        Stream st = streams.get(key);
        if (st == null) {
            st = new Stream(topicId, session);
            streams.put(key, st);
            st.next = seq + 1; // the stream's first frame here: joining mid-way has lost nothing
            return false;
        }
        if (!st.holding) {
            if (seq <= st.next) {
                st.next = Math.max(st.next, seq + 1); // in order (or older: the bus counts a duplicate, as always)
                return false;
            }
            final long gap = seq - st.next;
            gapFrames += gap;
            final NakTarget c = publishers.get(source);
            if (gap >= window || c == null || !c.live()) {
                notRecoverable += gap;
                st.next = seq + 1;
                return false;
            }
            startHold(st, c);
            missing(st, st.next, seq);
            store(st, seq, buffer, offset, length);
            st.maxSeen = seq;
            return true;
        }
        if (seq < st.next) {
            return false; // below what was delivered: the bus counts a duplicate, as always
        }
        if (seq - st.next >= window) {
            // beyond the hold: give up the oldest missing frames until it fits, delivering what is held in between
            while (st.holding && seq - st.next >= window) {
                advance(st, local);
            }
            if (!st.holding) {
                return onDatagram(topicId, subs, buffer, offset, length, source, local);
            }
        }
        if (seq <= st.maxSeen) {
            if (st.present(seq)) {
                duplicatesDropped++;
            } else {
                filledByUd++;
                store(st, seq, buffer, offset, length);
            }
        } else {
            if (seq > st.maxSeen + 1) {
                gapFrames += seq - st.maxSeen - 1;
                missing(st, st.maxSeen + 1, seq);
            }
            store(st, seq, buffer, offset, length);
            st.maxSeen = seq;
        }
        drain(st, local);
        return true;
    }

    /**
     * A RECOVERED frame of {@code topicId} arrived over RC (poller): it fills its stream's gap if that still waits for
     * it; otherwise (given up already, or never missing) it is dropped.
     */
    void onRecovered(final int topicId, final DirectBuffer buffer, final int offset, final int length,
                     final Int2ObjectHashMap<RdmaSubscription[]> local) {
        if (length < FrameHeader.LENGTH || length > stride || FrameHeader.topicId(buffer, offset) != topicId) {
            return;
        }
        final Stream st = streams.get(ReliableResume.resumeKey(topicId, FrameHeader.sessionId(buffer, offset)));
        final long seq = FrameHeader.sequence(buffer, offset);
        if (st == null || !st.holding || seq < st.next || seq > st.maxSeen || st.present(seq)) {
            return;
        }
        recovered++;
        store(st, seq, buffer, offset, length);
        drain(st, local);
    }

    /**
     * Gives up the missing frames whose time bound passed, delivering the held frames after them (poller, each duty cycle).
     *
     * @return frames delivered or given up
     */
    int onDuty(final Int2ObjectHashMap<RdmaSubscription[]> local) {
        return holding.isEmpty() ? 0 : onDuty(local, System.nanoTime());
    }

    /** {@link #onDuty(Int2ObjectHashMap)} at {@code now} (System.nanoTime). */
    int onDuty(final Int2ObjectHashMap<RdmaSubscription[]> local, final long now) {
        int work = 0;
        for (int i = holding.size() - 1; i >= 0; i--) {
            final Stream st = holding.get(i);
            // the next sequence is missing while a stream holds; once its bound passed it is given up, and the held
            // frames after it go out until the next missing one that is still within its bound
            while (st.holding && (st.present(st.next) || now - st.deadline[st.index(st.next)] >= 0)) {
                work += advance(st, local);
            }
        }
        return work;
    }

    /** @return whether any stream holds frames (the poller keeps its sleeps short then) */
    boolean holdingAny() {
        return !holding.isEmpty();
    }

    private void startHold(final Stream st, final NakTarget c) {
        if (st.frames == null) {
            st.frames = new UnsafeBuffer(new byte[window * stride]);
            st.lengths = new int[window];
            st.deadline = new long[window];
        }
        st.peer = c;
        st.holding = true;
        holding.add(st);
    }

    /** Marks {@code [from, to)} missing, with their deadline, and NAKs them once. */
    private void missing(final Stream st, final long from, final long to) {
        final long deadline = System.nanoTime() + boundNs;
        for (long s = from; s < to; s++) {
            final int i = st.index(s);
            st.lengths[i] = 0;
            st.deadline[i] = deadline;
        }
        if (st.peer.live()) {
            st.peer.nak(st.topicId, st.session, from, (int) (to - from));
            naksSent++;
        }
    }

    private void store(final Stream st, final long seq, final DirectBuffer buffer, final int offset, final int length) {
        final int i = st.index(seq);
        st.frames.putBytes(i * stride, buffer, offset, length);
        st.lengths[i] = length;
    }

    /** Delivers the held frames from the stream's next sequence on while they are there; ends the hold when none is left. */
    private void drain(final Stream st, final Int2ObjectHashMap<RdmaSubscription[]> local) {
        while (st.holding && st.present(st.next)) {
            advance(st, local);
        }
    }

    /** Delivers (held) or gives up (missing) the stream's next sequence. @return 1 */
    private int advance(final Stream st, final Int2ObjectHashMap<RdmaSubscription[]> local) {
        final int i = st.index(st.next);
        final int length = st.lengths[i];
        if (length > 0) {
            st.lengths[i] = 0;
            final RdmaSubscription[] subs = local.get(st.topicId);
            if (subs != null) {
                delivery.offer(subs, st.frames, i * stride, length);
            }
        } else {
            givenUp++; // the bus sees the jump at the next delivered frame and reports it in lostBefore
        }
        st.next++;
        if (st.next > st.maxSeen) {
            st.holding = false;
            st.peer = null;
            holding.remove(st);
        }
        return 1;
    }

    /** @return frames found missing in UD streams (each counted once) */
    long gapFrames() {
        return gapFrames;
    }

    /** @return NAKs sent */
    long naksSent() {
        return naksSent;
    }

    /** @return missing frames filled by a RECOVERED frame in time */
    long recovered() {
        return recovered;
    }

    /** @return missing frames given up at the time bound (or to make room in the hold): reported lost */
    long givenUp() {
        return givenUp;
    }

    /** @return missing frames of gaps not recovered at all (too long, or no RC connection to the publisher): reported lost */
    long notRecoverable() {
        return notRecoverable;
    }

    /** @return missing frames that arrived late over UD while their stream held */
    long filledByUd() {
        return filledByUd;
    }

    /** @return copies of frames already held that were dropped */
    long duplicatesDropped() {
        return duplicatesDropped;
    }

    /** One UD stream's sequence and hold (poller). */
    private final class Stream {
        final int topicId;
        final int session;
        /** The next sequence to deliver. */
        long next;
        /** While holding: the highest sequence seen. */
        long maxSeen = -1;
        boolean holding;
        NakTarget peer;
        /** Held frames by sequence mod window; a length of 0 is missing. Allocated at the stream's first gap. */
        UnsafeBuffer frames;
        int[] lengths;
        /** Per missing sequence: when it is given up (System.nanoTime). */
        long[] deadline;

        Stream(final int topicId, final int session) {
            this.topicId = topicId;
            this.session = session;
        }

        int index(final long seq) {
            return (int) (seq % window);
        }

        boolean present(final long seq) {
            return lengths[index(seq)] > 0;
        }
    }
}
