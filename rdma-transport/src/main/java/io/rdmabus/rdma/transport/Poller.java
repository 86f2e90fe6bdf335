package io.rdmabus.rdma.transport;

import io.rdmabus.Delivery;
import io.rdmabus.TransportException;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.rdma.verbs.EventFd;
import io.rdmabus.rdma.verbs.VerbsException;
import io.rdmabus.rdma.verbs.WorkCompletions;
import io.rdmabus.spi.SubscriptionSink;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The completion poller (as Aeron's {@code Receiver} and {@code Sender} in one agent, since one completion queue carries
 * both): polls the transport's shared CQ in batches, delivers received frames to local subscriptions (a frame a
 * back-pressuring sink refuses is copied into its topic's {@link TopicQueue}, so its receive buffer and credit go back at
 * once and the other topics on the connection keep flowing), returns credits and topic windows, authenticates
 * acceptors' peers, and runs the control sends
 * ({@link ControlSender}), RELIABLE resume and replay ({@link ReliableResume}) and the periodic duties
 * ({@link LivenessDuty}). Other threads reach it only through {@link PollerProxy}.
 *
 * <p>Owner: the thread running its duty cycle owns every field here, the local subscriptions and the {@link Connection}
 * fields marked "poller": its own thread ({@code rdma-bus-rdma-poller-<bus>}, {@code DEDICATED}), or the bus's host
 * (the shared thread, or in {@code INVOKER} mode the one thread inside the bus's duty cycle); it hands a failed
 * connection to the cm agent through {@link CmAgentProxy}.
 * The diagnostic counters below are plain fields read racily through the transport's {@code pollerStats()}.
 */
class Poller implements Agent {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaTransport.class);
    /** Completions polled per {@code ibv_poll_cq}. */
    private static final int BATCH = 64;
    /** A hosted poller counts as quiet this long after its last completion (not by its host's sleeps, which wakers end). */
    private static final long HOSTED_QUIET_NS = 1_000_000;

    private final String roleName;
    private final RdmaContext ctx;
    private final RdmaTransportConfig config;
    private final UdEndpoint ud;
    private final AtomicReferenceArray<RdmaPublication> pools;
    private final PollerProxy commands;
    private final CmAgentProxy cmProxy;
    private final WorkCompletions wcs = new WorkCompletions(BATCH);
    /** Local subscriptions by topic id. */
    private final Int2ObjectHashMap<RdmaSubscription[]> local = new Int2ObjectHashMap<>();
    /** Connections this poller serves (added by {@link #addConnection}, removed by {@link #fail}). */
    private final List<Connection> active = new ArrayList<>();
    private final ControlSender control;
    private final ReliableResume resume;
    private final LivenessDuty liveness;
    /** Reads the received RC message being handled (a control message, or a DATA envelope). */
    private final ControlFlyweight rx = new ControlFlyweight();
    /** Hosted by the bus: the time since the last completion tells it that it is quiet, not a sleep that timed out. */
    private boolean hosted;
    /** Hosted in {@code SHARED}: the shared thread sleeps in it; closed with the poller. Else null. */
    private PollerSleeper sleeper;
    private long lastCompletionNs;
    long dutyCycles;
    long idleCycles;
    long completions;
    long dataReceives;
    long sleeps;
    /** The last sleep on the completion channel ran out without an event: nothing arrived for a while. */
    private boolean quiet;
    private int emptyPolls;
    /** Whether a sink of the frame being offered took it into its stream (set by {@link #offer}). */
    private boolean offerTaken;

    Poller(final String roleName, final RdmaContext ctx, final PollerProxy commands, final CmAgentProxy cmProxy) {
        this.roleName = roleName;
        this.ctx = ctx;
        this.config = ctx.config;
        this.ud = ctx.ud;
        this.pools = ctx.publications.pools();
        this.commands = commands;
        this.cmProxy = cmProxy;
        this.control = new ControlSender(ctx, this::fail);
        this.resume = new ReliableResume(ctx, local, control, this::fail);
        this.liveness = new LivenessDuty(ctx, this::fail);
    }

    /**
     * The bus hosts this poller (set before it starts): it idles under the host's strategy, which may sleep on the
     * completion channel through {@code sleeper}.
     *
     * @param sleeper what the host sleeps in ({@code SHARED}), closed when the poller closes; null if the host does not
     */
    void hosted(final PollerSleeper sleeper) {
        this.hosted = true;
        this.sleeper = sleeper;
    }

    /** @return the diagnostic counters (racy): duty cycles, idle ones, completions, DATA receives, control sends, CREDITs, sleeps */
    long[] stats() {
        return new long[] {dutyCycles, idleCycles, completions, dataReceives, control.controlSends, control.creditSends, sleeps};
    }

    @Override
    public int doWork() {
        int work = commands.drain();
        int n = ctx.device.cq.poll(wcs);
        if (n < 0) {
            throw new TransportException("ibv_poll_cq failed: " + n);
        }
        for (int i = 0; i < n; i++) {
            onCompletion(i);
        }
        work += n;
        if (ud != null) {
            ud.flushReposts(); // UD path: the batch's receive buffers in one post
            work += ud.onPollerDuty();
            if (ud.recoveryReceiver != null) {
                work += ud.recoveryReceiver.onDuty(local); // gap recovery: give up what passed rdma.ud.recovery.ms
            }
        }
        work += resume.stepReplays();
        // owed credits below the batch threshold go back once the poller is quiet (a sleep timed out, ~1000 empty
        // polls when spinning, or hosted 1 ms without a completion), not on every empty poll: that cost one CREDIT
        // per ~3 frames under load
        emptyPolls = n == 0 ? emptyPolls + 1 : 0;
        if (hosted) {
            quiet = hostedQuiet(n);
        }
        boolean idle = quiet || emptyPolls >= 1000;
        quiet = false;
        work += liveness.onDuty(active);
        boolean keepalive = liveness.keepaliveDue();
        for (int i = 0; i < active.size(); i++) {
            Connection c = active.get(i);
            work += deliverHeld(c);
            flushReposts(c); // this batch's freed receive buffers in one post, before the CREDIT for them
            work += control.flush(c, idle, keepalive);
        }
        if (idle) {
            emptyPolls = 0;
        }
        completions += n;
        dutyCycles++;
        if (work == 0) {
            idleCycles++;
        }
        return work;
    }

    /** Hosted: quiet once no completion came for {@link #HOSTED_QUIET_NS} (the host's thread may park or sleep between cycles). */
    private boolean hostedQuiet(final int n) {
        if (n > 0 || lastCompletionNs == 0) {
            lastCompletionNs = System.nanoTime();
            return false;
        }
        if (System.nanoTime() - lastCompletionNs < HOSTED_QUIET_NS) {
            return false;
        }
        lastCompletionNs = System.nanoTime(); // then again a quiet period later, not on every cycle
        return true;
    }

    /**
     * Idle: arms the CQ, polls once more (a completion that raced the arming is handled now), then waits on the
     * completion channel (bounded). While frames wait in a topic queue for a back-pressuring sink it only parks
     * briefly, so they are offered again soon.
     *
     * @return completions handled (0 if it slept)
     */
    int sleep(final long timeoutMs) {
        return sleep(timeoutMs, null);
    }

    /**
     * As {@link #sleep(long)}; a signal of {@code wakeup} ends the wait too ({@link PollerSleeper}).
     *
     * @param wakeup what other threads signal to end the wait, or null
     * @return completions handled (0 if it slept)
     */
    int sleep(final long timeoutMs, final EventFd wakeup) {
        if (commands.hasCommands()) {
            return 1;
        }
        for (int i = 0; i < active.size(); i++) {
            if (active.get(i).queuedFrames > 0) {
                LockSupport.parkNanos(100_000);
                return 0;
            }
        }
        if (resume.replayAwaitingCommit()) {
            // a replay waits for the publisher thread's commit (no completion will wake us for that): look again soon;
            // an armed replay waiting for credits sleeps like any sender, the peer's CREDIT is a completion
            LockSupport.parkNanos(100_000);
            return 0;
        }
        int rc = ctx.device.cq.requestNotify(false);
        if (rc != 0) {
            throw new TransportException("ibv_req_notify_cq failed: " + rc);
        }
        int n = ctx.device.cq.poll(wcs);
        if (n < 0) {
            throw new TransportException("ibv_poll_cq failed: " + n);
        }
        if (n > 0) {
            for (int i = 0; i < n; i++) {
                onCompletion(i);
            }
            flushAllReposts();
            if (ud != null) {
                ud.flushReposts(); // UD path
            }
            completions += n;
            return n;
        }
        sleeps++;
        quiet = ctx.device.completionChannel.awaitEvent(timeoutMs, ctx.device.cq, wakeup) == null;
        return 0;
    }

    private void onCompletion(final int i) {
        long wrId = wcs.wrId(i);
        int connId = WorkRequestId.connectionId(wrId);
        int kind = WorkRequestId.kind(wrId);
        int pool = WorkRequestId.pool(wrId);
        int slot = WorkRequestId.slot(wrId);
        int status = wcs.status(i);
        if (WorkRequestId.isUd(kind)) {
            if (ud != null) {
                ud.onCompletion(wcs, i, kind, pool, slot, local); // UD path
            }
            return;
        }
        Connection c = ctx.connections.get(connId);
        switch (kind) {
            case WorkRequestId.KIND_DATA_SEND -> {
                if (c != null) {
                    c.sendCompletions++;
                    c.onDataSendCompletion(WorkRequestId.sequenceBits(wrId), pools);
                }
            }
            case WorkRequestId.KIND_CTRL_SEND -> {
                if (c != null) {
                    c.sendCompletions++;
                    c.ctrlBusy[slot] = false;
                    c.outstandingSends.decrementAndGet();
                    c.onControlSendCompletion(slot, pools);
                }
            }
            case WorkRequestId.KIND_RECV -> {
                if (c != null && !c.closed && status == WorkCompletions.SUCCESS) {
                    onReceive(c, slot, wcs.byteLength(i));
                }
            }
            default -> ctx.errorHandler.accept(new TransportException("unknown rdma work request id " + wrId));
        }
        if (status != WorkCompletions.SUCCESS && c != null && !c.closed) {
            if (status == WorkCompletions.RETRY_EXC_ERR) {
                // the peer stopped acknowledging: gone or unreachable, not a fault of this node; it redials (or we do)
                ctx.counters.increment(RdmaCounter.PEERS_LOST);
                LOG.warn("rdma transport of bus '{}': {} stopped acknowledging ({}); closing the connection, seeds redial and "
                        + "RELIABLE subscribers resume", ctx.busName, c, WorkCompletions.statusText(status));
                fail(c, null);
            } else {
                fail(c, status == WorkCompletions.WR_FLUSH_ERR ? null
                        : new TransportException(c + ": work completion failed: " + WorkCompletions.statusText(status)));
            }
        }
    }

    private void onReceive(final Connection c, final int slot, final int length) {
        if (!c.admitted) {
            // not verified yet (the cm agent still checks the peer's proof): keep it, act on it only after admission,
            // so a peer that is then refused never had a SUB, UD address or credit taken from it
            c.earlySlot[c.earlyCount] = slot;
            c.earlyLength[c.earlyCount] = length;
            c.earlyCount++;
            return;
        }
        ControlFlyweight msg = rx.wrap(c.recvView, slot * c.slotBytes);
        int type = msg.type();
        if (c.expectedProof != null) {
            // not authenticated yet: the only message accepted is the connector's AUTH (or its BYE)
            verifyAuth(c, slot, msg, length);
            return;
        }
        int kind = ControlMessages.classify(msg, length, config.maxFrameBytes(), RdmaTransportConfig.MAX_DATA_CREDITS);
        if (kind < 0 && kind != ControlMessages.ERR_PEER_FRAME) {
            // bounds-checked before anything acts on it: a malformed message is counted, reported and dropped
            repost(c, slot);
            ctx.counters.increment(RdmaCounter.MALFORMED_MESSAGES);
            ctx.errorHandler.accept(new TransportException(c + ": dropped a malformed message (" + ControlMessages.describe(kind)
                    + ", type " + type + ", " + length + " bytes)"));
            return;
        }
        if (type == Wire.RECOVERED) {
            // gap recovery: a retained UD frame the publisher re-sent for our NAK; its buffer's credit goes back as DATA's
            dataReceives++;
            c.dataReceived(length - Wire.ENVELOPE_BYTES);
            if (ud != null && ud.recoveryReceiver != null) {
                ud.recoveryReceiver.onRecovered(msg.topicId(), c.recvView, msg.frameOffset(), length - Wire.ENVELOPE_BYTES, local);
            }
            repost(c, slot, true);
            return;
        }
        if (type == Wire.DATA) {
            dataReceives++;
            c.dataReceived(length - Wire.ENVELOPE_BYTES);
            int tail = (c.heldHead + c.heldSize) % c.recvSlots;
            c.heldSlot[tail] = slot;
            c.heldLength[tail] = length;
            c.heldValid[tail] = validFrame(msg, length - Wire.ENVELOPE_BYTES);
            c.heldSize++;
            return;
        }
        onControlMessage(c, slot, msg);
    }

    /**
     * The one validation of a received bus frame's header ({@link FrameHeader#validate}), here where its bytes first
     * arrive, against the largest frame this transport announced for its topic's delivery (what the bus's sink checks
     * against): a valid frame goes to the sinks through {@link SubscriptionSink#onValidatedFrame}, which does not
     * validate again; an invalid one through {@link SubscriptionSink#onFrame}, where the bus validates it itself, counts
     * it as malformed and drops it. A frame for a topic without a local subscription is not looked at.
     */
    private boolean validFrame(final ControlFlyweight data, final int frameLength) {
        RdmaSubscription[] subs = local.get(data.topicId());
        return subs != null && subs.length > 0
                && FrameHeader.validate(data.buffer(), data.frameOffset(), frameLength, subs[0].maxFrameLength) == FrameHeader.VALID;
    }

    /** Acts on one well-formed control message (classify checked its length and fields), then reposts its slot. */
    private void onControlMessage(final Connection c, final int slot, final ControlFlyweight msg) {
        switch (msg.type()) {
            case Wire.INIT -> {
                int peerFrame = msg.peerMaxFrame();
                if (peerFrame < config.maxFrameBytes()) {
                    repost(c, slot);
                    fail(c, new TransportException(c + ": the peer's " + RdmaTransportConfig.FRAME_BYTES + " is " + peerFrame
                            + ", smaller than ours (" + config.maxFrameBytes() + "): use the same value on every node"));
                    return;
                }
                c.peerTopicWindow = msg.credits(); // before ready: a route (and its windows) follows a SUB, after INIT
                c.credits.addAndGet(msg.credits());
                c.ready = true;
            }
            case Wire.CREDIT -> c.credits.addAndGet(msg.credits());
            case Wire.TOPIC_CREDIT -> {
                if (!onTopicCredit(c, msg.topicId(), msg.topicCreditFrames())) {
                    repost(c, slot);
                    return;
                }
            }
            case Wire.SUB -> resume.onSub(c, msg.topicId()); // routed after the topic's STARTs (or the replay's end)
            case Wire.UNSUB -> {
                int topicId = msg.topicId();
                c.deferredSubs.remove(topicId);
                if (resume.replayPending(c, topicId)) {
                    c.unsubscribedDuringReplay.add(topicId);
                }
                ctx.publications.route(topicId).remove(c);
            }
            case Wire.START -> resume.onStart(c, msg.topicId(), msg.sessionId(), msg.firstSequence());
            case Wire.RESUME -> resume.onResume(c, msg.topicId(), msg.sessionId(), msg.nextSequence());
            case Wire.RESUME_FAILED -> resume.onResumeFailed(c, msg.topicId(), msg.sessionId(), msg.retentionFrames(), msg.nextSequence(),
                    msg.oldestSequence());
            case Wire.NAK -> {
                if (ud != null && ud.recoveryServer != null) { // gap recovery: re-send what the UD publication retains
                    ud.recoveryServer.onNak(c, msg.topicId(), msg.sessionId(), msg.nakFirst(), msg.nakCount());
                }
            }
            case Wire.BYE -> {
                fail(c, null);
                return;
            }
            case Wire.UD_INFO -> {
                if (ud != null) { // classify checked the length
                    ud.onPeerInfo(c, msg.udQpn(), msg.udIpv4(), msg.udQkey()); // UD path
                }
            }
            case Wire.AUTH -> {
                // a connector's proof arriving at a node without a secret: the connector would refuse us anyway
                repost(c, slot);
                ctx.refusals.refused(c.peer, "it sent AUTH (it has a bus secret) but this node has none: set the same " + AuthConfig.SECRET_FILE
                        + " on every node");
                fail(c, null);
                return;
            }
            default -> {
                // no other type gets here: classify dropped it as malformed
            }
        }
        repost(c, slot);
    }

    private void verifyAuth(final Connection c, final int slot, final ControlFlyweight msg, final int length) {
        int type = msg.type();
        if (type == Wire.BYE) {
            fail(c, null);
            return;
        }
        boolean ok = false;
        if (type == Wire.AUTH && length >= Wire.AUTH_BYTES) {
            byte[] got = new byte[PeerAuth.PROOF_BYTES];
            msg.getProof(got);
            ok = PeerAuth.matches(c.expectedProof, got);
        }
        repost(c, slot);
        if (!ok) {
            ctx.refusals.refused(c.peer, type == Wire.AUTH ? "wrong bus secret (its AUTH proof does not match)"
                    : "no AUTH before its first message (type " + type + "): it has no bus secret or another one");
            fail(c, null);
            return;
        }
        c.expectedProof = null; // authenticated: INIT and SUBs go out on the next flushControl
    }

    private void repost(final Connection c, final int slot) {
        repost(c, slot, false);
    }

    /**
     * Queues receive buffer {@code slot} for re-posting in the connection's post list; {@link #flushReposts} posts the
     * list (at once if it is full). {@code credit}: a consumed DATA frame's buffer, whose credit is owed to the peer only
     * once the buffer is posted again.
     */
    private void repost(final Connection c, final int slot, final boolean credit) {
        if (c.closed) {
            return;
        }
        if (c.reposts.isFull()) {
            flushReposts(c);
            if (c.closed) {
                return;
            }
        }
        c.reposts.add(WorkRequestId.of(c.id, WorkRequestId.KIND_RECV, 0, slot), c.recvMr, (long) slot * c.slotBytes, c.slotBytes);
        if (credit) {
            c.repostCredits++;
        }
    }

    /**
     * Posts the receive buffers queued on {@code c} with one {@code ibv_post_recv} over its list, then counts their
     * credits for return (the CREDIT goes out after this, in {@link ControlSender#flush}). A failed post fails the
     * connection: the buffers before {@code bad_wr} were posted and are flushed with the QP, the rest stay with it; none
     * is posted twice and no credit is granted for any of them.
     *
     * @return buffers posted
     */
    private int flushReposts(final Connection c) {
        int n = c.reposts.count();
        if (n == 0) {
            return 0;
        }
        if (c.closed) {
            c.reposts.clear();
            c.repostCredits = 0;
            return 0;
        }
        int rc = c.qp.postRecv(c.reposts);
        if (rc != 0) {
            int failedAt = c.reposts.failedIndex();
            c.reposts.clear();
            c.repostCredits = 0;
            fail(c, new VerbsException("ibv_post_recv (post list of " + n + ", refused at " + failedAt + ")", rc));
            return 0;
        }
        c.creditsToReturn += c.repostCredits;
        c.repostCredits = 0;
        c.reposts.clear();
        return n;
    }

    /** Posts every connection's queued receive buffers (after a batch of completions handled outside {@link #doWork}). */
    private void flushAllReposts() {
        for (int i = 0; i < active.size(); i++) {
            flushReposts(active.get(i));
        }
    }

    /**
     * Offers this batch's DATA receives in arrival order, after the frames already waiting in topic queues (those go
     * first, so a topic's order holds). A frame of a topic whose queue is not empty joins the queue; otherwise it goes to
     * the topic's sinks, and if one back-pressures the frame is copied into the topic's queue (the sinks before it do
     * not get it twice). Either way the receive buffer is re-posted and its connection credit counted at once, so one
     * back-pressured topic never holds the buffers the other topics on the connection need. A topic queue is bounded by
     * the window this node granted: a peer that sends past it broke the protocol (counted, connection closed).
     *
     * <p>A RELIABLE frame that a sink took into its stream ({@link SubscriptionSink#CONTINUE} from
     * {@code onValidatedFrame}) moves where the stream resumes after a reconnect, when it is taken (a queued frame is not
     * consumed yet); one every sink dropped ({@link SubscriptionSink#DROPPED}: a duplicate, a suspect jump, another topic's
     * id) or that failed validation moves nothing.
     *
     * @return frames consumed
     */
    private int deliverHeld(final Connection c) {
        int delivered = c.queuedFrames > 0 ? drainTopicQueues(c) : 0;
        while (c.heldSize > 0 && !c.closed) {
            int slot = c.heldSlot[c.heldHead];
            int frameLength = c.heldLength[c.heldHead] - Wire.ENVELOPE_BYTES;
            boolean valid = c.heldValid[c.heldHead];
            ControlFlyweight data = rx.wrap(c.recvView, slot * c.slotBytes);
            int topicId = data.topicId();
            int frame = data.frameOffset();
            c.heldHead = (c.heldHead + 1) % c.recvSlots;
            c.heldSize--;
            TopicQueue q = c.topicQueue(topicId, config.dataCredits());
            if (q.size() > 0) {
                if (!enqueue(c, q, frame, frameLength, valid, 0)) {
                    return delivered;
                }
            } else {
                offerTaken = false;
                int refused = offer(c, topicId, c.recvView, frame, frameLength, valid, 0);
                if (refused >= 0) {
                    if (!enqueue(c, q, frame, frameLength, valid, refused)) {
                        return delivered;
                    }
                } else {
                    q.owed++;
                    delivered++;
                }
            }
            repost(c, slot, true); // its credit counts once flushReposts posted it
        }
        return delivered;
    }

    /**
     * Copies a refused frame of {@code c}'s receive buffer into its topic's queue, to be offered from sink
     * {@code nextSink} on. A full queue means the peer sent past the topic's window: counted, and the connection fails.
     *
     * @return false if the connection failed
     */
    private boolean enqueue(final Connection c, final TopicQueue q, final int frame, final int frameLength, final boolean valid,
                            final int nextSink) {
        boolean first = q.size() == 0;
        if (!q.add(c.recvView, frame, frameLength, valid)) {
            ctx.counters.increment(RdmaCounter.TOPIC_WINDOW_VIOLATIONS);
            fail(c, new TransportException(c + ": the peer sent more frames of topic " + q.topicId + " than its window of "
                    + config.dataCredits() + " (the topic's TOPIC_CREDITs bound what it may have outstanding): protocol error, closing"));
            return false;
        }
        if (first) {
            q.headSinkIndex = nextSink;
            q.headTaken = offerTaken;
        }
        c.queuedFrames++;
        return true;
    }

    /** Offers the head frames of {@code c}'s topic queues until each is empty or back-pressured. @return frames consumed */
    private int drainTopicQueues(final Connection c) {
        int delivered = 0;
        List<TopicQueue> queues = c.topicQueueList;
        for (int i = 0; i < queues.size() && !c.closed; i++) {
            TopicQueue q = queues.get(i);
            while (q.size() > 0) {
                offerTaken = q.headTaken;
                DirectBuffer head = q.headBuffer();
                int refused = offer(c, q.topicId, head, 0, q.headLength(), q.headValid(), q.headSinkIndex);
                if (refused >= 0) {
                    q.headSinkIndex = refused;
                    q.headTaken = offerTaken;
                    break;
                }
                q.consumeHead();
                c.queuedFrames--;
                delivered++;
            }
        }
        return delivered;
    }

    /**
     * Offers one frame to the topic's local sinks from sink {@code fromSink} on; {@link #offerTaken} says (in and out)
     * whether a sink took it into its stream. Once every sink had it, a RELIABLE frame a sink took moves the resume point.
     *
     * @return the index of the sink that back-pressured, or -1 once every sink had it (or the topic has none here)
     */
    private int offer(final Connection c, final int topicId, final DirectBuffer buffer, final int frame, final int frameLength,
                      final boolean valid, final int fromSink) {
        RdmaSubscription[] subs = local.get(topicId);
        if (subs == null) {
            return -1;
        }
        for (int k = fromSink; k < subs.length; k++) {
            RdmaSubscription s = subs[k];
            if (s.closed) {
                continue;
            }
            int r = valid ? s.sink.onValidatedFrame(buffer, frame, frameLength) : s.sink.onFrame(buffer, frame, frameLength);
            if (r == SubscriptionSink.BACK_PRESSURE) {
                return k;
            }
            offerTaken |= valid && r == SubscriptionSink.CONTINUE;
        }
        if (offerTaken && subs.length > 0 && subs[0].topic.delivery() == Delivery.RELIABLE) {
            resume.recordConsumed(c, topicId, buffer, frame);
        }
        return -1;
    }

    /**
     * Publisher side: the subscriber returned {@code frames} of {@code topicId}'s window on {@code c}. More than it was
     * sent (a window that was never opened, or one that would grow past the grant) is a protocol error: counted, and the
     * connection fails.
     *
     * @return false if the connection failed
     */
    private boolean onTopicCredit(final Connection c, final int topicId, final int frames) {
        AtomicInteger window = c.existingTopicWindow(topicId);
        // publishers only take from the window concurrently, so a sum past the grant is past it whatever they do
        if (window == null || window.get() + frames > c.peerTopicWindow) {
            ctx.counters.increment(RdmaCounter.TOPIC_WINDOW_VIOLATIONS);
            fail(c, new TransportException(c + ": the peer returned " + frames + " frames of topic " + topicId + "'s window, more than "
                    + "were sent to it (window " + c.peerTopicWindow + "): protocol error, closing"));
            return false;
        }
        window.addAndGet(frames);
        return true;
    }

    void addLocal(final RdmaSubscription sub) {
        int topicId = sub.topic.topicId();
        RdmaSubscription[] cur = local.get(topicId);
        if (cur == null) {
            local.put(topicId, new RdmaSubscription[] {sub});
            for (Connection c : active) {
                c.pendingControl.sub(topicId);
            }
        } else {
            RdmaSubscription[] next = Arrays.copyOf(cur, cur.length + 1);
            next[cur.length] = sub;
            local.put(topicId, next);
        }
    }
    /** Starts serving the established connection {@code c} the cm agent handed over: UD_INFO, RESUMEs, SUBs, then what it sent early. */
    void addConnection(final Connection c) {
        if (c.closed) {
            return;
        }
        active.add(c);
        if (ud != null) {
            c.pendingControl.udInfo(ud.qpn, ud.ipv4, ud.qkey); // UD path: before any SUB
        }
        long resumesBefore = ctx.counters.get(RdmaCounter.RESUME_REQUESTS);
        resume.requestResume(c); // RESUME before the SUB of its topic: the publisher replays before it routes new frames
        announceSubscriptions(c, ctx.counters.get(RdmaCounter.RESUME_REQUESTS) > resumesBefore);
        control.flush(c, true, false);
        c.admitted = true;
        for (int i = 0; i < c.earlyCount && !c.closed; i++) {
            onReceive(c, c.earlySlot[i], c.earlyLength[i]); // what the peer sent before it was verified, in order
        }
        c.earlyCount = 0;
        flushReposts(c);
    }

    /**
     * Sends a SUB for every local topic on the new connection {@code c} (unless it failed meanwhile), right behind the
     * RESUMEs when {@code resuming}. The seam where a test makes the SUBs arrive after the replay has ended (what a slow
     * link or a later completion batch can do): {@code RdmaTestSeams.withLateSubsAfterResume} overrides it.
     */
    void announceSubscriptions(final Connection c, final boolean resuming) {
        if (c.closed) {
            return;
        }
        for (int topicId : local.keySet()) {
            c.pendingControl.sub(topicId);
        }
        control.flush(c, true, false);
    }

    /** A new RELIABLE publication that knows its session: its START to every connection of its topic, then it may claim. */
    void announce(final RdmaPublication pub) {
        resume.announce(pub);
    }

    void removeLocal(final RdmaSubscription sub) {
        int topicId = sub.topic.topicId();
        RdmaSubscription[] cur = local.get(topicId);
        if (cur == null) {
            return;
        }
        List<RdmaSubscription> keep = new ArrayList<>();
        for (RdmaSubscription s : cur) {
            if (s != sub) {
                keep.add(s);
            }
        }
        if (keep.isEmpty()) {
            local.remove(topicId);
            for (Connection c : active) {
                c.pendingControl.unsub(topicId);
                TopicQueue q = c.existingTopicQueue(topicId);
                if (q != null) {
                    c.queuedFrames -= q.clear(); // dropped unconsumed: their window goes back to the publisher
                }
            }
            resume.forgetTopic(topicId, active); // a later subscription starts afresh, it does not resume this one
        } else {
            local.put(topicId, keep.toArray(new RdmaSubscription[0]));
        }
    }

    /** Stops using {@code c}, forgets its received and queued frames (a resume replays them) and routes, and hands it to the cm agent to destroy. */
    void fail(final Connection c, final Throwable cause) {
        if (c.closed) {
            return;
        }
        c.closed = true;
        active.remove(c);
        c.heldSize = 0;
        c.reposts.clear(); // never posted: the buffers go with the QP
        c.repostCredits = 0;
        boolean closing = ctx.transportClosed();
        if (!closing) {
            resume.onConnectionLost(c); // held frames are dropped with the connection; consumed says where a reconnect resumes
        }
        ctx.publications.removeFromRoutes(c);
        if (ud != null) {
            ud.forget(c); // UD path
        }
        if (cause != null) {
            ctx.errorHandler.accept(cause);
        }
        if (!closing) {
            cmProxy.destroy(c);
        }
    }

    /** The transport closes: a BYE to every peer, so it tears down at once. */
    void sayGoodbye() {
        for (Connection c : active) {
            control.sendBye(c);
        }
    }

    @Override
    public void onClose() {
        if (sleeper != null) {
            sleeper.close(); // the host parks from now on: the completion channel goes with the transport
        }
        for (RdmaSubscription[] subs : local.values()) {
            for (RdmaSubscription s : subs) {
                s.closed = true;
            }
        }
        wcs.close();
    }

    @Override
    public String roleName() {
        return roleName;
    }
}
