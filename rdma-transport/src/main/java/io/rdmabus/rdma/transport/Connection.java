package io.rdmabus.rdma.transport;

import io.rdmabus.rdma.verbs.CmEventChannel;
import io.rdmabus.rdma.verbs.CmId;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.QueuePair;
import io.rdmabus.rdma.verbs.RecvRequest;
import io.rdmabus.rdma.verbs.RecvRequestList;
import io.rdmabus.rdma.verbs.SendRequest;
import io.rdmabus.rdma.verbs.SendRequestList;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.IntHashSet;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One RC connection between two transports (one QP per node pair, both directions). Built and destroyed by the
 * cm agent ({@link ConnectionManager}, {@link ConnectionLifecycle}); between those the {@link Poller} owns the receive
 * side and the control sends, publications post data sends. The fields are grouped below by the thread that owns them.
 */
final class Connection {
    /**
     * Data sends are signalled once every this many posts on a connection (selective signalling): RC completes work
     * requests in order, so one signalled completion (or a control send's, which are all signalled) releases every
     * send posted before it. Fewer completions per frame for the poller to wake up for and handle.
     */
    static final int SIGNAL_INTERVAL = 16;
    /** Inline send size asked for at QP creation: small frames and control messages skip the memory-region read. */
    static final int INLINE_BYTES = 256;
    /** Receive buffers re-posted with one {@code ibv_post_recv} at most (the poller's post list per connection). */
    static final int REPOST_LIST = 32;
    private static final long SEQ_MASK = WorkRequestId.SEQUENCE_MASK;

    // ---- immutable: set by the cm agent at construction, read by every thread
    final int id;
    final String peer;
    final CmId cmId;
    final CmEventChannel ownChannel;
    final QueuePair qp;
    final MemoryRegion recvMr;
    final MemoryRegion ctrlMr;
    final UnsafeBuffer recvView;
    final UnsafeBuffer ctrlView;
    final int slotBytes;
    final int recvSlots;
    /** Largest send posted inline on this QP: the {@code max_inline_data} the device granted (0 if it refused inline sends). */
    final int maxInlineBytes;

    // ---- shared: atomics and volatiles, each written and read by the threads named
    /** Data credits the peer granted us (sender side): publications and replays take them, the poller adds CREDITs. */
    final AtomicInteger credits = new AtomicInteger();
    /** Posted sends (data and control) whose completion has not been polled yet: posters add, the poller releases. */
    final AtomicInteger outstandingSends = new AtomicInteger();
    /** The {@link RdmaConnectionCounter} counts, one slot each (each descriptor names its writer); any thread reads them. */
    final AtomicLongArray counters = new AtomicLongArray(RdmaConnectionCounter.values().length);
    /** Publisher threads between their closed-check and their post: destroy waits for 0 after {@link #closed}. */
    final AtomicInteger posters = new AtomicInteger();
    /** Volatile: the cm agent sets it, publications and diagnostics read it. */
    volatile boolean established;
    /** The peer's INIT arrived: it granted credits. Volatile: the poller sets it, publications read it. */
    volatile boolean ready;
    /** Volatile: the poller (fail), the cm agent (destroy) and close() set it; every thread checks it before using the QP. */
    volatile boolean closed;
    /**
     * Volatile: the cm agent sets it once the peer's node id, endpoint and reconnect count are known (after the connect
     * reply or request was checked), so {@code connections()} lists the connection under its real name.
     */
    volatile boolean identified;
    /** Volatile: the cm agent (or close()) sets it once the QP and buffers are freed; the cm agent's tables and tests read it. */
    volatile boolean destroyed;

    // ---- postLock: the send ring, shared by publisher threads (data posts) and the poller (control posts, releases)
    /** Serialises posts on the QP (publications on several threads, control sends) with the send ring below. */
    final Object postLock = new Object();
    /** Data sends posted and not yet released, by post sequence: publication pool index << 16 | slot (postLock). */
    private final long[] sendRing;
    private final int sendRingMask;
    private long postedSeq;
    private long releasedSeq;
    private int sinceSignal;
    /** The last signalled data send's post sequence, -1 before the first (postLock). */
    private long lastSignaledSeq = -1;
    /** {@link #chainStart}'s record of the ring's signalling state (postLock). */
    private int chainSinceSignal;
    private long chainLastSignaledSeq;
    /** Per control slot: the post sequence of the first data send after it, i.e. what its completion releases (postLock). */
    private final long[] ctrlMark = new long[RdmaTransportConfig.CONTROL_SLOTS];

    // ---- cm agent: set before it hands the connection to the poller (PollerProxy.addConnection), read-only after
    /** This node accepted the connection (the peer dialled it); false for one dialled to a seed. */
    boolean acceptedHere;
    /** The peer transport's random node id (from the connect private data), 0 if unknown. */
    long peerNodeId;
    /** The peer's rdma_cm listen endpoint ip:port (from its connect request, or the seed we dialled). */
    String peerEndpoint;
    /** Bound on the wait for the peer's AUTH (System.nanoTime). */
    long authDeadlineNs;
    /** Acceptor with a secret: the proof the connector's AUTH must carry; the poller sets it to null once verified. */
    byte[] expectedProof;
    /** Connector with a secret: the proof to send as the first message; the poller sets it to null once sent. */
    byte[] proofToSend;

    // ---- poller: only the poller thread touches these between the hand-over and the destroy (the cm agent posts the
    // first receives with recvRequest before, and closes both requests after)
    final RecvRequest recvRequest = new RecvRequest();
    final SendRequest ctrlRequest = new SendRequest();
    /**
     * Receive buffers freed during the current poll batch and duty cycle, re-posted together by one {@code ibv_post_recv}
     * over this preallocated off-heap list ({@code Poller.flushReposts}): poller-owned, like every field in this group.
     */
    final RecvRequestList reposts;
    /** Of the buffers in {@link #reposts}: those of consumed DATA frames, whose credits count only once they are posted. */
    int repostCredits;
    final int[] heldSlot;
    final int[] heldLength;
    /** Per held frame: whether its bus frame header passed {@code FrameHeader.validate} when it arrived (see {@link Poller}). */
    final boolean[] heldValid;
    /**
     * Set when the poller took the connection over from the cm agent (after the peer was verified). Until then what the
     * peer sends is kept in its receive slots ({@link #earlySlot}), not acted on: a connector checks the acceptor's
     * proof only after the connection is established, and the acceptor may send at once.
     */
    boolean admitted;
    final int[] earlySlot;
    final int[] earlyLength;
    int earlyCount;
    /**
     * DATA receives of the current batch in arrival order ({@link #heldSlot}), offered to the sinks in the same duty
     * cycle; a frame a sink refuses moves to its topic's {@link TopicQueue}, so its buffer never waits here.
     */
    int heldHead;
    int heldSize;
    int creditsToReturn;
    boolean initSent;
    /** Send completions (data and control, any status) polled for this connection: the stall watchdog's progress mark. */
    long sendCompletions;
    /** {@link #sendCompletions} at the watchdog's previous check. */
    long sendCompletionsAtCheck;
    /** When the watchdog first saw a signalled send in flight and no completion since its previous check, 0 if not stalled. */
    long stalledSinceNs;
    /** {@link #postedSends()} at the poller's previous quiet check (tail release, see ControlSender). */
    long postedAtLastQuiet = -1;
    final boolean[] ctrlBusy = new boolean[RdmaTransportConfig.CONTROL_SLOTS];
    /** Control messages waiting for a free control slot, encoded (see {@link ControlSender}). */
    final ControlQueue pendingControl = new ControlQueue();
    /**
     * Subscriber side: per (topic id &lt;&lt; 32 | session id) of a RELIABLE topic, the sequence after the last frame from
     * this peer that every local sink took, or, before the first such frame, the first sequence the publisher's START
     * announced. Kept by peer node id when the connection fails, for RESUME.
     */
    Long2LongHashMap consumed = new Long2LongHashMap(-1);
    /** Publisher side: topics this peer subscribed whose route waits for a replay to finish or for its STARTs to be posted. */
    final IntHashSet deferredSubs = new IntHashSet();
    /** Publisher side: topics this peer unsubscribed while their replay ran, so the replay's end does not route them. */
    final IntHashSet unsubscribedDuringReplay = new IntHashSet();

    /**
     * Subscriber side: per topic id, the frames a back-pressuring sink refused (copied out of the receive buffers) and
     * the topic window owed back to the peer; created at the topic's first frame on this connection, kept for its life.
     */
    private final Int2ObjectHashMap<TopicQueue> topicQueues = new Int2ObjectHashMap<>();
    /** The same queues in creation order, for the poller's loops without an iterator. */
    final List<TopicQueue> topicQueueList = new ArrayList<>();
    /** Frames in all of {@link #topicQueues}: the poller keeps offering them while there are any. */
    int queuedFrames;
    /**
     * Publisher side: the per-topic window the peer granted (its INIT's credit grant): how many frames of one topic may
     * be outstanding on this connection (sent and not returned by a TOPIC_CREDIT). Set when INIT arrives.
     */
    int peerTopicWindow;
    /** Publisher side: per topic id, the window left (publications and replays take, TOPIC_CREDIT adds); see {@link #topicWindow}. */
    private final Int2ObjectHashMap<AtomicInteger> topicWindows = new Int2ObjectHashMap<>();

    Connection(final int id, final String peer, final CmId cmId, final CmEventChannel ownChannel, final QueuePair qp,
               final MemoryRegion recvMr, final MemoryRegion ctrlMr, final int slotBytes, final int recvSlots, final int maxSendWr,
               final int maxInlineBytes) {
        this.id = id;
        this.peer = peer;
        this.cmId = cmId;
        this.ownChannel = ownChannel;
        this.qp = qp;
        this.recvMr = recvMr;
        this.ctrlMr = ctrlMr;
        this.slotBytes = slotBytes;
        this.recvSlots = recvSlots;
        this.maxInlineBytes = maxInlineBytes;
        this.recvView = new UnsafeBuffer(recvMr.address(), (int) recvMr.sizeBytes());
        this.ctrlView = new UnsafeBuffer(ctrlMr.address(), (int) ctrlMr.sizeBytes());
        this.heldSlot = new int[recvSlots];
        this.heldValid = new boolean[recvSlots];
        this.heldLength = new int[recvSlots];
        this.earlySlot = new int[recvSlots];
        this.earlyLength = new int[recvSlots];
        this.reposts = new RecvRequestList(Math.min(REPOST_LIST, recvSlots));
        // room for every send the QP can hold twice over: a full ring means completions were lost, which tears down
        this.sendRing = new long[Integer.highestOneBit(Math.max(64, maxSendWr * 4) - 1) << 1];
        this.sendRingMask = sendRing.length - 1;
    }

    /**
     * Claims the next data send sequence (postLock held); {@code poolIndex} -1 for a send from no publication's pool.
     *
     * @return the sequence, or -1 if the ring is full
     */
    long nextDataSend(final int poolIndex, final int slot) {
        long seq = postedSeq;
        if (seq - releasedSeq >= sendRing.length) {
            return -1;
        }
        sendRing[(int) seq & sendRingMask] = ((long) poolIndex << 16) | (slot & 0xFFFF);
        return seq;
    }

    /** @return whether the data send about to be posted must be signalled (postLock held) */
    boolean signalNext() {
        return sinceSignal + 1 >= SIGNAL_INTERVAL || postedSeq - releasedSeq >= sendRing.length / 2;
    }

    /** A data message of a {@code frameBytes} frame was received (the poller). */
    void dataReceived(final int frameBytes) {
        counters.setRelease(RdmaConnectionCounter.MESSAGES_IN.id(), counters.getPlain(RdmaConnectionCounter.MESSAGES_IN.id()) + 1);
        counters.setRelease(RdmaConnectionCounter.BYTES_IN.id(), counters.getPlain(RdmaConnectionCounter.BYTES_IN.id()) + frameBytes);
    }

    /** The data send {@code seq} of a {@code frameBytes} frame was posted, alone (postLock held). */
    void dataSendPosted(final long seq, final boolean signaled, final int frameBytes) {
        dataSendAdded(seq, signaled);
        dataSendsCounted(1, 1, frameBytes);
    }

    /**
     * The data send {@code seq} joins the ring before its post (postLock held): alone ({@link #dataSendPosted}) or in a
     * chain, where the next request's {@link #nextDataSend} and {@link #signalNext} follow on from it. A chain's post
     * then counts what it posted ({@link #dataSendsCounted}) and, if it failed part-way, gives back the rest
     * ({@link #chainPostedOnly}).
     */
    void dataSendAdded(final long seq, final boolean signaled) {
        postedSeq = seq + 1;
        sinceSignal = signaled ? 0 : sinceSignal + 1;
        if (signaled) {
            lastSignaledSeq = seq;
        }
    }

    /** {@code sends} data sends of {@code frameBytes} frame bytes in all went out in {@code posts} ibv_post_send calls (postLock held). */
    void dataSendsCounted(final int sends, final int posts, final long frameBytes) {
        counters.setRelease(RdmaConnectionCounter.MESSAGES_OUT.id(), counters.getPlain(RdmaConnectionCounter.MESSAGES_OUT.id()) + sends);
        counters.setRelease(RdmaConnectionCounter.BYTES_OUT.id(), counters.getPlain(RdmaConnectionCounter.BYTES_OUT.id()) + frameBytes);
        counters.setRelease(RdmaConnectionCounter.DATA_POSTS.id(), counters.getPlain(RdmaConnectionCounter.DATA_POSTS.id()) + posts);
    }

    /** Before a chain's first {@link #dataSendAdded}: remembers the ring's state to go back to (postLock held). */
    long chainStart() {
        chainSinceSignal = sinceSignal;
        chainLastSignaledSeq = lastSignaledSeq;
        return postedSeq;
    }

    /**
     * The chain added from {@code start} on was posted up to request {@code posted} only (its post failed there): the
     * ring takes back the rest, as if only those had been added (postLock held).
     */
    void chainPostedOnly(final long start, final int posted, final SendRequestList chain) {
        postedSeq = start;
        sinceSignal = chainSinceSignal;
        lastSignaledSeq = chainLastSignaledSeq;
        for (int i = 0; i < posted; i++) {
            dataSendAdded(start + i, chain.signaled(i));
        }
    }

    /** A control send goes out on {@code ctrlSlot}: its completion releases the data sends posted before it (postLock held). */
    void controlSendPosted(final int ctrlSlot) {
        ctrlMark[ctrlSlot] = postedSeq;
    }

    /** A data send's completion (signalled, or an error/flush): releases it and every send before it (poller). */
    void onDataSendCompletion(final long seqBits, final AtomicReferenceArray<RdmaPublication> pools) {
        synchronized (postLock) {
            long pending = postedSeq - releasedSeq;
            long delta = (seqBits - releasedSeq) & SEQ_MASK;
            if (delta < pending) {
                releaseUpTo(releasedSeq + delta + 1, pools);
            }
        }
    }

    /** A control send's completion: releases the data sends posted before it (poller). */
    void onControlSendCompletion(final int ctrlSlot, final AtomicReferenceArray<RdmaPublication> pools) {
        synchronized (postLock) {
            long mark = ctrlMark[ctrlSlot];
            if (mark > releasedSeq && mark <= postedSeq) {
                releaseUpTo(mark, pools);
            }
        }
    }

    /** Releases everything posted (after the QP was flushed and drained, or at teardown). */
    void releaseAll(final AtomicReferenceArray<RdmaPublication> pools) {
        synchronized (postLock) {
            releaseUpTo(postedSeq, pools);
        }
    }

    /** @return data sends posted so far (read under postLock) */
    long postedSends() {
        synchronized (postLock) {
            return postedSeq;
        }
    }

    /**
     * @return a signalled data send is posted and its completion not seen yet, i.e. the device owes us a completion
     *     (unsignalled sends after the last signalled one complete silently; read under postLock)
     */
    boolean signaledDataSendInFlight() {
        synchronized (postLock) {
            return lastSignaledSeq >= releasedSeq;
        }
    }

    /** @return data sends released so far: a send of post sequence {@code s} has completed when this is above {@code s} (postLock) */
    long releasedSends() {
        synchronized (postLock) {
            return releasedSeq;
        }
    }

    /** @return data sends posted whose completion was not seen yet (read under postLock) */
    long unreleasedSends() {
        synchronized (postLock) {
            return postedSeq - releasedSeq;
        }
    }

    private void releaseUpTo(final long endExclusive, final AtomicReferenceArray<RdmaPublication> pools) {
        for (long s = releasedSeq; s < endExclusive; s++) {
            long entry = sendRing[(int) s & sendRingMask];
            // a negative entry (pool index -1): a send from no publication's pool (UdRecoveryServer's staging slots)
            RdmaPublication p = entry < 0 ? null : pools.get((int) (entry >>> 16) & 0xFFF);
            if (p != null) {
                p.onSendComplete((int) entry & 0xFFFF);
            }
            outstandingSends.decrementAndGet();
        }
        if (endExclusive > releasedSeq) {
            releasedSeq = endExclusive;
        }
    }

    /** @return whether a control send is in flight on this connection (poller) */
    boolean anyControlInFlight() {
        for (boolean busy : ctrlBusy) {
            if (busy) {
                return true;
            }
        }
        return false;
    }

    /** @return a free control slot, or -1 (poller) */
    int freeControlSlot() {
        for (int i = 0; i < ctrlBusy.length; i++) {
            if (!ctrlBusy[i]) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Publisher side (poller): the window of {@code topicId} on this connection, created full at its first route or
     * replay and kept for the connection's life (an UNSUB does not reset it, so frames in flight across an UNSUB and a
     * new SUB are returned into the same window). Publications read it through {@link TopicRoute.Targets}.
     */
    AtomicInteger topicWindow(final int topicId) {
        AtomicInteger w = topicWindows.get(topicId);
        if (w == null) {
            w = new AtomicInteger(peerTopicWindow);
            topicWindows.put(topicId, w);
        }
        return w;
    }

    /** @return the window of {@code topicId} if the topic was ever routed or replayed here, else null (poller) */
    AtomicInteger existingTopicWindow(final int topicId) {
        return topicWindows.get(topicId);
    }

    /** @return the queue of {@code topicId} on this connection, created with {@code capacity} frames at first use (poller) */
    TopicQueue topicQueue(final int topicId, final int capacity) {
        TopicQueue q = topicQueues.get(topicId);
        if (q == null) {
            q = new TopicQueue(topicId, capacity);
            topicQueues.put(topicId, q);
            topicQueueList.add(q);
        }
        return q;
    }

    /** @return the queue of {@code topicId}, or null if none of its frames arrived here (poller) */
    TopicQueue existingTopicQueue(final int topicId) {
        return topicQueues.get(topicId);
    }

    /** Takes one frame of {@code window} if there is one (any thread). */
    static boolean tryTake(final AtomicInteger window) {
        while (true) {
            int w = window.get();
            if (w <= 0) {
                return false;
            }
            if (window.compareAndSet(w, w - 1)) {
                return true;
            }
        }
    }

    /** @return usable for data: established on our side, peer granted credits, not closing */
    boolean live() {
        return ready && established && !closed;
    }

    /** Takes one data credit if there is one (any thread). */
    boolean tryTakeCredit() {
        return tryTake(credits);
    }

    /** @return this connection's counters, by {@link RdmaConnectionCounter} name in its order (any thread: a racy snapshot) */
    io.rdmabus.ConnectionStats stats() {
        java.util.Map<String, Long> values = new java.util.LinkedHashMap<>();
        for (RdmaConnectionCounter counter : RdmaConnectionCounter.values()) {
            long value = switch (counter) {
                case CREDITS -> credits.get();
                case OUTSTANDING_SENDS -> outstandingSends.get();
                default -> counters.getAcquire(counter.id());
            };
            values.put(counter.counterName(), value);
        }
        String endpoint = peerEndpoint != null ? peerEndpoint : peer;
        return new io.rdmabus.ConnectionStats(id, endpoint + " (node " + Long.toHexString(peerNodeId) + ")",
                java.util.Collections.unmodifiableMap(values));
    }

    @Override
    public String toString() {
        return "connection#" + id + "(" + peer + ")";
    }
}
