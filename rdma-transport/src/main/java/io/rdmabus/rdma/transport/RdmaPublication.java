package io.rdmabus.rdma.transport;

import io.rdmabus.Delivery;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.SendRequest;
import io.rdmabus.rdma.verbs.SendRequestList;
import io.rdmabus.spi.FrameClaim;
import io.rdmabus.spi.HostedAgent;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A topic's sending side: a registered pool of send slots. {@link #tryClaim} takes the next slot (if its previous
 * sends have completed), one data credit on each subscriber's connection and one frame of the topic's window on it
 * (see {@link Wire#TOPIC_CREDIT}: it bounds what one topic may have outstanding per connection, so a back-pressured
 * topic cannot take the receive buffers of the others); {@link #commit} posts one SEND per
 * subscriber from the same slot, which returns to the pool when the last of those sends completes (the poller
 * counts the slot's reference count down), not at commit.
 *
 * <p>RELIABLE: every subscriber needs a credit and a frame of the topic's window, otherwise {@link TransportStatus#BACK_PRESSURED} (the slowest
 * subscriber holds the publisher back). BEST_EFFORT: subscribers without either are skipped (the frame is dropped
 * for them and counted); BACK_PRESSURED only if no subscriber has a credit.
 *
 * <p>Retention (RELIABLE): the slot ring is {@code rdma.retention.frames} long and slots are reused in order, so the
 * last that many committed frames stay in registered memory (no copy). The k-th commit lives in slot {@code k % slots};
 * per slot the frame's bus sequence and length are recorded. A subscriber that reconnects asks (RESUME) for the frames
 * from its next sequence on; the poller re-posts them on that connection only ({@link #replay}). While a replay is
 * pending the publication claims nothing ({@code BACK_PRESSURED}), so no new frame overtakes a replayed one and no slot
 * being replayed is overwritten. The handshake between the publisher thread and the poller is two volatiles:
 * {@code tryClaim} sets {@code inClaim} then reads {@code replaying}; the poller raises {@code replaying} then waits until
 * it reads {@code inClaim} false, after which the ring is stable until the replay ends.
 *
 * <p>Stream starts (RELIABLE): a subscriber's connection gets a START (session, first sequence) of this publication
 * before its first DATA, so a break before any frame arrived still resumes from the stream's start
 * ({@link ReliableResume}). A publication created with its session id ({@code Transport.addPublication(topic,
 * sessionId)}, what the bus calls) claims nothing until the poller has posted its START on every connection its topic
 * is routed to (the same {@code replaying} block, raised at construction).
 *
 * <p>Batches: between {@link #beginBatch} and {@link #endBatch} (the bus's batch offer) commits do not post; the end of
 * the batch (or a full {@link RcSendBatch}) posts each connection's frames of the batch, in commit order, as one chain
 * with one {@code ibv_post_send}. The batch holds the claim gate throughout, so a replay (which waits for the gate) never
 * starts between a frame's commit and its post, and {@link #close} on another thread waits for the batch's post.
 */
final class RdmaPublication implements TransportPublication, FrameClaim {
    private static final long LINGER_NS = TimeUnit.SECONDS.toNanos(2);

    final int poolIndex;
    /** The transport's shared state: whether it closes, and the publication table this publication leaves at close. */
    private final RdmaContext ctx;
    /** Where a connection a post failed on goes to be torn down (any thread). */
    private final PollerProxy poller;
    /** Where the poller runs: close lingers for completions only while it does, letting it progress while it waits. */
    private final HostedAgent pollerHost;
    /** Writes the DATA envelope in front of each frame (publisher thread). */
    private final ControlFlyweight envelope = new ControlFlyweight();
    private final TopicDescriptor topic;
    private final TopicRoute route;
    private final boolean reliable;
    private final int maxFrame;
    private final int slotBytes;
    private final int slots;
    private final MemoryRegion mr;
    private final UnsafeBuffer view;
    private final SendRequest request = new SendRequest();
    /** The frames of the batch in progress not posted yet (publisher thread; created at the first batch). */
    private RcSendBatch batch;
    /** The poller's own request for replays (the publisher thread owns {@link #request}). */
    private final SendRequest replayRequest = new SendRequest();
    /** Per slot: the bus sequence of the frame committed in it (RELIABLE retention). */
    private final long[] slotSequence;
    /** Per slot: the committed frame's length (bus header included). */
    private final int[] slotLength;
    /** Frames committed so far; commit k is in slot k % slots. Written by the publisher, read by the poller after {@link #claimInProgress}. */
    private long committed;
    /**
     * The bus session id of this publication's frames: given at construction by the bus, else learnt from the first
     * committed frame's header; set once.
     */
    private volatile int sessionId;
    private volatile boolean sessionKnown;
    /**
     * The sequence after the last committed frame's (0 before the first): where a stream that starts now starts, since
     * every later frame has a higher sequence. Release-stored by the publisher at commit, read by the poller for START.
     */
    private final AtomicLong nextStreamSequence = new AtomicLong();
    /** Publisher thread between a successful claim and its commit/abort (see the class comment). */
    private final ClaimGate gate = new ClaimGate();
    /**
     * Replays in progress or pending on this publication, plus 1 from construction until its STARTs are posted (written by
     * the constructor, before the publication is shared, then by the poller only).
     */
    private volatile int replaying;
    /** Per slot: sends posted from it whose completion the poller has not seen yet (0 = free). */
    final AtomicIntegerArray refs;
    private final Connection[] targets;
    /** The topic's window on each of {@link #targets}, one frame taken from each. */
    private final AtomicInteger[] targetWindows;
    private int targetCount;
    private int cursor;
    private boolean claimed;
    private int claimLength;
    private volatile boolean closed;
    private long droppedNoCredit;
    /** Diagnostics (publisher thread): claims refused for want of a free send slot / of a credit. */
    long noSlot;
    long noCredit;
    /** Diagnostics (publisher thread): claims refused while a reconnected subscriber was being replayed (or STARTs posted). */
    long replayWaits;

    RdmaPublication(final RdmaContext ctx, final PollerProxy poller, final HostedAgent pollerHost, final int poolIndex,
                    final TopicDescriptor topic, final TopicRoute route, final MemoryRegion mr, final int maxFrame, final int slotBytes,
                    final int slots, final int sessionId) {
        this.ctx = ctx;
        this.poller = poller;
        this.pollerHost = pollerHost;
        this.poolIndex = poolIndex;
        this.topic = topic;
        this.route = route;
        this.reliable = topic.delivery() == Delivery.RELIABLE;
        this.maxFrame = maxFrame;
        this.slotBytes = slotBytes;
        this.slots = slots;
        this.mr = mr;
        this.view = new UnsafeBuffer(mr.address(), (int) mr.sizeBytes());
        this.refs = new AtomicIntegerArray(slots);
        this.targets = new Connection[64];
        this.targetWindows = new AtomicInteger[64];
        this.slotSequence = new long[slots];
        this.slotLength = new int[slots];
        if (reliable && sessionId != 0) {
            this.sessionId = sessionId;
            this.sessionKnown = true;
            this.replaying = 1; // claims wait for the poller to post this publication's STARTs (announced())
        }
    }

    @Override
    public int tryClaim(final int frameLength) {
        if (closed || ctx.transportClosed()) {
            return TransportStatus.CLOSED;
        }
        if (frameLength > maxFrame || frameLength < 0) {
            return TransportStatus.FRAME_TOO_LARGE;
        }
        if (claimed) {
            abort(); // an earlier claim never committed (outside a batch it opens the gate: before entering again)
        }
        gate.enterClaim();
        final int status;
        if (closed) {
            status = TransportStatus.CLOSED; // close() raced this claim: it waits for the gate, so the slots stay registered
        } else if (replaying != 0) {
            // a reconnected subscriber is being replayed its missed frames first: nothing new may overtake them
            replayWaits++;
            status = TransportStatus.BACK_PRESSURED;
        } else {
            status = claimSlotAndCredits(frameLength);
        }
        if (status != TransportStatus.OK) {
            gate.endClaim();
        }
        return status;
    }

    private int claimSlotAndCredits(final int frameLength) {
        final TopicRoute.Targets routed = route.targets();
        final Connection[] subs = routed.subscribers();
        final AtomicInteger[] windows = routed.windows();
        int live = 0;
        for (Connection c : subs) {
            if (c.live()) {
                live++;
            }
        }
        if (live == 0) {
            return TransportStatus.NOT_CONNECTED;
        }
        if (refs.get(cursor) != 0) {
            noSlot++;
            return TransportStatus.BACK_PRESSURED;
        }
        targetCount = 0;
        for (int i = 0; i < subs.length; i++) {
            final Connection c = subs[i];
            if (!c.live() || targetCount == targets.length) {
                continue;
            }
            if (takeCreditAndWindow(c, windows[i])) {
                targetWindows[targetCount] = windows[i];
                targets[targetCount++] = c;
            } else if (reliable) {
                noCredit++;
                giveBackCredits();
                return TransportStatus.BACK_PRESSURED;
            } else {
                droppedNoCredit++;
                c.counters.incrementAndGet(RdmaConnectionCounter.DROPS.id());
            }
        }
        if (targetCount == 0) {
            return TransportStatus.BACK_PRESSURED;
        }
        claimed = true;
        claimLength = frameLength;
        return TransportStatus.OK;
    }

    /** @return whether it took one credit of {@code c} and one frame of the topic's {@code window} on it (both or neither) */
    private static boolean takeCreditAndWindow(final Connection c, final AtomicInteger window) {
        if (!c.tryTakeCredit()) {
            return false;
        }
        if (Connection.tryTake(window)) {
            return true;
        }
        c.credits.incrementAndGet();
        return false;
    }

    @Override
    public FrameClaim claim() {
        return this;
    }

    @Override
    public MutableDirectBuffer buffer() {
        return view;
    }

    @Override
    public int offset() {
        return cursor * slotBytes + Wire.ENVELOPE_BYTES;
    }

    @Override
    public int length() {
        return claimLength;
    }

    @Override
    public void commit() {
        if (!claimed) {
            return;
        }
        claimed = false;
        final int slot = cursor;
        final int base = slot * slotBytes;
        envelope.wrap(view, base).data(topic.topicId());
        if (reliable && claimLength >= FrameHeader.LENGTH) {
            final int frame = base + Wire.ENVELOPE_BYTES;
            slotSequence[slot] = FrameHeader.sequence(view, frame);
            nextStreamSequence.lazySet(slotSequence[slot] + 1);
            if (!sessionKnown) {
                sessionId = FrameHeader.sessionId(view, frame);
                sessionKnown = true;
            }
        } else {
            slotSequence[slot] = -1;
        }
        slotLength[slot] = claimLength;
        committed++;
        refs.set(slot, targetCount);
        cursor = slot + 1 == slots ? 0 : slot + 1;
        if (gate.inBatch()) {
            batch.add(slot, claimLength, targets, targetCount);
            for (int i = 0; i < targetCount; i++) {
                targetWindows[i] = null; // taken for good: the subscriber returns it in a TOPIC_CREDIT
            }
            if (batch.isFull()) {
                postBatch();
            }
            return;
        }
        for (int i = 0; i < targetCount; i++) {
            final Connection c = targets[i];
            targets[i] = null;
            targetWindows[i] = null; // taken for good: the subscriber returns it in a TOPIC_CREDIT
            if (!post(c, slot, base, claimLength, request)) {
                refs.decrementAndGet(slot);
                if (!ctx.transportClosed()) {
                    poller.fail(c); // the poller tears it down
                }
            }
        }
        gate.endClaim();
    }

    private boolean post(final Connection c, final int slot, final int base, final int frameLength, final SendRequest request) {
        c.posters.incrementAndGet();
        try {
            synchronized (c.postLock) {
                if (c.closed) {
                    return false;
                }
                final long seq = c.nextDataSend(poolIndex, slot);
                if (seq < 0) {
                    return false;
                }
                final boolean signaled = c.signalNext();
                request.prepareSend(WorkRequestId.ofDataSend(c.id, seq), mr, base, Wire.ENVELOPE_BYTES + frameLength, signaled);
                if (Wire.ENVELOPE_BYTES + frameLength <= c.maxInlineBytes) {
                    request.inline();
                }
                if (c.qp.postSend(request) != 0) {
                    return false;
                }
                // counted under postLock: the poller releases (and counts down) under it too, so never before this
                c.outstandingSends.incrementAndGet();
                c.dataSendPosted(seq, signaled, frameLength);
                return true;
            }
        } catch (RuntimeException e) {
            return false;
        } finally {
            c.posters.decrementAndGet();
        }
    }

    @Override
    public void abort() {
        if (claimed) {
            claimed = false;
            giveBackCredits();
        }
        gate.endClaim();
    }

    /**
     * Commits until {@link #endBatch} go into the batch; it is posted when full and at the end. Holds the claim gate for
     * the whole batch.
     */
    @Override
    public void beginBatch() {
        if (gate.inBatch()) {
            return;
        }
        if (claimed) {
            abort();
        }
        if (batch == null) {
            batch = new RcSendBatch(slots);
        }
        gate.beginBatch();
    }

    /** Posts what the batch holds (one {@code ibv_post_send} per connection) and opens the claim gate. */
    @Override
    public void endBatch() {
        if (!gate.inBatch()) {
            return;
        }
        if (claimed) {
            abort(); // a claim of the batch never committed
        }
        postBatch();
        gate.endBatch();
    }

    /** Posts the batch's frames: for each connection, in the order of their first frame, one chain of its frames. */
    private void postBatch() {
        final RcSendBatch b = batch;
        for (int f = 0; f < b.frames(); f++) {
            for (int i = 0; i < b.targetCount(f); i++) {
                final Connection c = b.takeTarget(f, i);
                if (c != null) {
                    postChain(c, f);
                }
            }
        }
        b.clear();
    }

    /**
     * Posts, on {@code c}, batch frame {@code first} and every later one that goes to {@code c} (taking them out of the
     * batch) as one chain; a frame that could not be posted gives back its slot reference, and the connection is failed.
     */
    private void postChain(final Connection c, final int first) {
        final RcSendBatch b = batch;
        int listed = 0;
        for (int f = first; f < b.frames(); f++) {
            if (f == first || b.takeTarget(f, c)) {
                b.chained(listed++, f);
            }
        }
        int posted = 0;
        c.posters.incrementAndGet();
        try {
            synchronized (c.postLock) {
                if (!c.closed) {
                    posted = chainAndPost(c, listed);
                }
            }
        } finally {
            c.posters.decrementAndGet();
        }
        for (int r = posted; r < listed; r++) {
            refs.decrementAndGet(b.slot(b.chainedFrame(r)));
        }
        if (posted < listed && !ctx.transportClosed()) {
            poller.fail(c); // the poller tears it down
        }
    }

    /**
     * Chains the {@code listed} batch frames {@link RcSendBatch#chainedFrame} names for {@code c} (as many as its send
     * ring takes) and posts them with one call (postLock held).
     *
     * @return the requests posted: the first that many listed frames are on their way, the rest are not
     */
    private int chainAndPost(final Connection c, final int listed) {
        final RcSendBatch b = batch;
        final SendRequestList chain = b.chain();
        chain.clear();
        final long start = c.chainStart();
        for (int r = 0; r < listed; r++) {
            final int slot = b.slot(b.chainedFrame(r));
            final long seq = c.nextDataSend(poolIndex, slot);
            if (seq < 0) {
                break;
            }
            final boolean signaled = c.signalNext();
            final int bytes = Wire.ENVELOPE_BYTES + b.length(b.chainedFrame(r));
            chain.addSend(WorkRequestId.ofDataSend(c.id, seq), mr, (long) slot * slotBytes, bytes, signaled, bytes <= c.maxInlineBytes);
            c.dataSendAdded(seq, signaled);
        }
        final int chained = chain.count();
        int posted;
        try {
            posted = chained == 0 || c.qp.postSend(chain) == 0 ? chained : Math.max(0, chain.failedIndex());
        } catch (RuntimeException e) {
            posted = 0; // the QP closed under us: nothing was posted
        }
        if (posted < chained) {
            c.chainPostedOnly(start, posted, chain);
        }
        if (posted > 0) {
            long frameBytes = 0;
            for (int r = 0; r < posted; r++) {
                frameBytes += b.length(b.chainedFrame(r));
            }
            c.outstandingSends.addAndGet(posted);
            c.dataSendsCounted(posted, 1, frameBytes);
        }
        return posted;
    }

    private void giveBackCredits() {
        for (int i = 0; i < targetCount; i++) {
            targets[i].credits.incrementAndGet();
            targetWindows[i].incrementAndGet();
            targets[i] = null;
            targetWindows[i] = null;
        }
        targetCount = 0;
    }

    @Override
    public int maxFrameLength() {
        return maxFrame;
    }

    @Override
    public boolean isConnected() {
        for (Connection c : route.subscribers()) {
            if (c.live()) {
                return true;
            }
        }
        return false;
    }

    /** @return best-effort frames not sent to a subscriber that had no credit */
    long droppedNoCredit() {
        return droppedNoCredit;
    }

    // ------------------------------------------------------------------------------------------------ retention (poller)

    /** @return true for a RELIABLE publication: it retains its last {@code slots} frames for resume */
    boolean retains() {
        return reliable;
    }

    /** @return the topic id */
    int topicId() {
        return topic.topicId();
    }

    /** @return whether this publication has committed a frame of bus session {@code session} (poller, replay stable) */
    boolean ownsSession(final int session) {
        return sessionKnown && sessionId == session;
    }

    /** @return whether the session id is known (given at construction, or from the first committed frame) */
    boolean hasSession() {
        return sessionKnown;
    }

    /** @return the bus session id (only when {@link #hasSession}) */
    int sessionId() {
        return sessionId;
    }

    /**
     * @return where a stream of this publication that starts now starts: the sequence after the last committed frame's, 0
     *     before the first (poller; no frame committed after this call is older)
     */
    long nextStreamSequence() {
        return nextStreamSequence.get();
    }

    /** The poller posted this publication's STARTs on every connection its topic is routed to: it may claim. */
    void announced() {
        endReplay();
    }

    /** The poller starts a replay: from now on claims are refused until {@link #endReplay}. */
    void beginReplay() {
        replaying = replaying + 1; // single writer (the poller)
    }

    /** The poller finished (or abandoned) a replay. */
    void endReplay() {
        replaying = replaying - 1;
    }

    /** @return true while the publisher thread is between a claim and its commit/abort: the ring is not stable yet */
    boolean claimInProgress() {
        return gate.inClaim();
    }

    /** @return the first commit index still retained (only after {@link #claimInProgress} read false during a replay) */
    long oldestRetainedCommit() {
        return Math.max(0, committed - slots);
    }

    /** @return commits so far (the index the next commit gets) */
    long commits() {
        return committed;
    }

    /** @return the bus sequence of retained commit {@code k} */
    long sequenceOfCommit(final long k) {
        return slotSequence[(int) (k % slots)];
    }

    /**
     * Re-posts retained commit {@code k} on {@code c} only (poller; the caller took a credit of {@code c} and a frame of
     * the topic's window on it).
     *
     * @return false if the post failed (the connection is broken)
     */
    boolean replay(final Connection c, final long k) {
        final int slot = (int) (k % slots);
        refs.incrementAndGet(slot);
        if (!post(c, slot, slot * slotBytes, slotLength[slot], replayRequest)) {
            refs.decrementAndGet(slot);
            return false;
        }
        return true;
    }

    /** @return true once {@link #close} started: replays stop */
    boolean isClosing() {
        return closed;
    }

    /** Completion of one send from {@code slot} (poller thread). */
    void onSendComplete(final int slot) {
        if (slot >= 0 && slot < slots) {
            // never below 0: a late release for a pool index a newer publication reuses must not wedge its ring
            int v;
            do {
                v = refs.get(slot);
            } while (v > 0 && !refs.compareAndSet(slot, v, v - 1));
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        ctx.publications.sessionEnded(this); // from now on a RESUME of this session is answered from there
        if (gate.heldByCurrentThread()) {
            abort();
            endBatch(); // a batch in progress: its frames are posted before the slots are lingered on
        }
        // Linger: committed frames are posted; wait for their completions so the slots' memory stays registered (INVOKER:
        // idleWhileWaiting runs the poller on this thread when the application's loop is not inside the bus's cycle)
        final long deadline = System.nanoTime() + LINGER_NS;
        while ((busySlots() > 0 || replaying > 0) && System.nanoTime() < deadline && !pollerHost.isClosed()) {
            pollerHost.idleWhileWaiting();
        }
        ctx.publications.sessionEnded(this); // after a claim that was in progress at close committed
        ctx.publications.remove(this);
        if (!gate.awaitOpen(deadline, this, TimeUnit.NANOSECONDS.toMillis(LINGER_NS), mr.sizeBytes())) {
            return;
        }
        request.close();
        replayRequest.close();
        if (batch != null) {
            batch.close();
        }
        mr.close();
    }

    private int busySlots() {
        int n = 0;
        for (int i = 0; i < slots; i++) {
            n += refs.get(i) != 0 ? 1 : 0;
        }
        return n;
    }

    @Override
    public String toString() {
        return "rdma publication of " + topic.name() + " (" + topic.delivery() + ")";
    }
}
