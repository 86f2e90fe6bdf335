package io.rdmabus.rdma.transport;

import io.rdmabus.Delivery;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.RetentionExceededException;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * RELIABLE resume after a reconnect, both sides. Subscriber: remembers per RELIABLE stream where it resumes
 * ({@code Connection.consumed}), keeps that by the peer's node id when the connection fails, and asks the new connection
 * to resume (RESUME); a RESUME_FAILED fails the topic's local sinks with {@link RetentionExceededException}. Publisher:
 * serves a RESUME by re-posting the retained frames from the asked sequence on ({@link Replay}), or refuses it.
 *
 * <p>Stream starts: before a connection gets any DATA of a RELIABLE publication, the publisher posts a START on it
 * (session id, the sequence its stream there starts at), and the subscriber records that as where the stream resumes
 * unless it already has a resume point for it. So a subscriber that had no frame of a session when its connection broke
 * still resumes from the stream's start. START and DATA cannot be reordered: a connection is added to a topic's route
 * (SUB, a replay's end) only once its control queue, which holds the STARTs, has drained onto the QP ({@link StartGate});
 * a new publication claims nothing until its START is posted on every connection of its topic's route. Both sends are on
 * the same RC QP, which delivers in post order.
 *
 * <p>Owner: the poller thread; part of the {@link Poller}, which runs {@link #stepReplays} every duty cycle.
 */
final class ReliableResume {
    private final RdmaContext ctx;
    private final RdmaTransportConfig config;
    /** The poller's local subscriptions by topic id (the poller's map, read here). */
    private final Int2ObjectHashMap<RdmaSubscription[]> local;
    private final ControlSender control;
    private final BiConsumer<Connection, Throwable> fail;
    /** Subscriber side: resume state of connections lost, by the peer's node id, until it expires. */
    private final Long2ObjectHashMap<ResumeState> resumeByNode = new Long2ObjectHashMap<>();
    /** Publisher side: replays of retained frames to reconnected subscribers, in progress. */
    private final List<Replay> replays = new ArrayList<>();
    /** Publisher side: routes and new publications waiting for their STARTs to leave the control queues. */
    private final List<StartGate> gates = new ArrayList<>();

    ReliableResume(final RdmaContext ctx, final Int2ObjectHashMap<RdmaSubscription[]> local, final ControlSender control,
                   final BiConsumer<Connection, Throwable> fail) {
        this.ctx = ctx;
        this.config = ctx.config;
        this.local = local;
        this.control = control;
        this.fail = fail;
    }

    /** Advances every replay in progress, and opens the gates whose STARTs were posted. @return work done */
    int stepReplays() {
        int work = 0;
        for (int i = replays.size() - 1; i >= 0; i--) {
            work += stepReplay(replays.get(i));
        }
        for (int i = gates.size() - 1; i >= 0; i--) {
            if (tryOpen(gates.get(i))) {
                gates.remove(i);
                work++;
            }
        }
        return work;
    }

    // ------------------------------------------------------------------------------------------------ stream starts

    /**
     * Publisher: {@code c}'s peer subscribes {@code topicId}. While a replay of the topic to it is pending the replay's
     * end routes it; otherwise the STARTs of the topic's publications go out first and the route follows once they are
     * posted ({@code deferredSubs} holds the topic until then; an UNSUB meanwhile takes it out).
     */
    void onSub(final Connection c, final int topicId) {
        boolean gated = c.deferredSubs.contains(topicId);
        c.deferredSubs.add(topicId);
        if (gated || replayPending(c, topicId)) {
            return; // the pending gate or the replay's end routes it
        }
        queueStarts(c, topicId);
        StartGate g = new StartGate(new Connection[] {c}, topicId, null);
        if (!tryOpen(g)) {
            gates.add(g);
        }
    }

    /**
     * Publisher: a new publication (session known, claims blocked) of a topic: its START goes to every connection its
     * topic is routed to, or will be routed to by a pending gate or replay, and it may claim once those are posted.
     */
    void announce(final RdmaPublication pub) {
        int topicId = pub.topicId();
        List<Connection> targets = new ArrayList<>(List.of(ctx.publications.route(topicId).subscribers()));
        for (StartGate g : gates) {
            if (g.routeTopic == topicId && !targets.contains(g.conns[0])) {
                targets.add(g.conns[0]);
            }
        }
        for (Replay r : replays) {
            if (r.topicId == topicId && !targets.contains(r.c)) {
                targets.add(r.c);
            }
        }
        for (Connection c : targets) {
            if (!c.closed) {
                queueStart(c, pub);
                control.flush(c, false, false);
            }
        }
        StartGate g = new StartGate(targets.toArray(new Connection[0]), 0, pub);
        if (!tryOpen(g)) {
            gates.add(g);
        }
    }

    /** Queues a START of every publication of {@code topicId} that knows its session on {@code c}, and flushes. */
    private void queueStarts(final Connection c, final int topicId) {
        for (RdmaPublication p : ctx.publications.startsOf(topicId)) {
            queueStart(c, p);
        }
        control.flush(c, false, false);
    }

    private void queueStart(final Connection c, final RdmaPublication p) {
        // read before the route add: every frame committed after it, so every frame c can get, is at or after it
        c.pendingControl.start(p.topicId(), p.sessionId(), p.nextStreamSequence());
        ctx.counters.increment(RdmaCounter.STREAM_STARTS_SENT);
    }

    /** @return whether the gate opened: each of its connections closed or has posted what was queued before it */
    private boolean tryOpen(final StartGate g) {
        for (Connection c : g.conns) {
            if (!c.closed && !c.pendingControl.isEmpty()) {
                return false;
            }
        }
        if (g.release != null) {
            g.release.announced();
            return true;
        }
        Connection c = g.conns[0];
        if (!c.closed && !replayPending(c, g.routeTopic) && c.deferredSubs.remove(g.routeTopic)) {
            ctx.publications.route(g.routeTopic).add(c);
        }
        return true;
    }

    /**
     * Subscriber: the publisher's stream of {@code session} of {@code topicId} on {@code c} starts at {@code first}. Kept as
     * where it resumes only for a subscribed RELIABLE topic and only if {@code c} has no resume point for that stream
     * yet (a frame taken, a resumed stream): a START never moves one back.
     */
    void onStart(final Connection c, final int topicId, final int session, final long first) {
        ctx.counters.increment(RdmaCounter.STREAM_STARTS_RECEIVED);
        RdmaSubscription[] subs = local.get(topicId);
        if (subs == null || subs.length == 0 || subs[0].topic.delivery() != Delivery.RELIABLE) {
            return;
        }
        long key = resumeKey(topicId, session);
        if (!c.consumed.containsKey(key)) {
            c.consumed.put(key, first);
        }
    }

    /** @return whether a replay waits for the publisher thread's commit (no completion will wake the poller for that) */
    boolean replayAwaitingCommit() {
        for (int i = 0; i < replays.size(); i++) {
            if (!replays.get(i).armed) {
                return true;
            }
        }
        return false;
    }

    /** Subscriber: {@code c} failed; what its peer's RELIABLE streams consumed says where a reconnect resumes. */
    void onConnectionLost(final Connection c) {
        if (c.peerNodeId != 0 && !c.consumed.isEmpty()) {
            resumeByNode.put(c.peerNodeId, new ResumeState(c.consumed, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.retentionResumeMs())));
        }
    }

    /** The last local subscription of {@code topicId} went: a later one starts afresh, it does not resume this one. */
    void forgetTopic(final int topicId, final List<Connection> active) {
        for (Connection c : active) {
            forgetTopic(c.consumed, topicId);
        }
        for (ResumeState st : resumeByNode.values()) {
            forgetTopic(st.next, topicId);
        }
    }

    /**
     * Subscriber: a sink took the RELIABLE frame of {@code c} at {@code frame} of {@code buffer} (its receive buffer, or
     * the topic's queue the frame was copied into while a sink back-pressured) into its stream; remember where its
     * session resumes. The poller calls it only for a frame whose header it validated on arrival and that a sink then
     * took (not one it dropped as a duplicate or a suspect jump), so the header is read as it is. No allocation.
     */
    void recordConsumed(final Connection c, final int topicId, final org.agrona.DirectBuffer buffer, final int frame) {
        c.consumed.put(resumeKey(topicId, FrameHeader.sessionId(buffer, frame)), FrameHeader.sequence(buffer, frame) + 1);
    }

    /** Subscriber: a new connection to a node we lost within rdma.retention.resume.ms asks to resume every RELIABLE stream. */
    void requestResume(final Connection c) {
        long now = System.nanoTime();
        resumeByNode.values().removeIf(st -> now - st.expiresAtNs > 0);
        ResumeState st = c.peerNodeId == 0 ? null : resumeByNode.remove(c.peerNodeId);
        if (st == null) {
            return;
        }
        c.consumed = st.next; // a second break before the replay ends still knows where to resume
        List<Long> stale = new ArrayList<>();
        Long2LongHashMap.EntryIterator it = st.next.entrySet().iterator();
        while (it.hasNext()) {
            it.next();
            long key = it.getLongKey();
            int topicId = (int) (key >>> 32);
            RdmaSubscription[] subs = local.get(topicId);
            if (subs == null || subs.length == 0 || subs[0].topic.delivery() != Delivery.RELIABLE) {
                stale.add(key);
                continue;
            }
            c.pendingControl.resume(topicId, (int) key, it.getLongValue());
            ctx.counters.increment(RdmaCounter.RESUME_REQUESTS);
        }
        for (long key : stale) {
            st.next.remove(key);
        }
    }

    /** Publisher: a reconnected subscriber asks for session {@code session} of {@code topicId} from {@code next} on. */
    void onResume(final Connection c, final int topicId, final int session, final long next) {
        RdmaPublication pub = ctx.publications.findRetaining(topicId, session);
        if (pub == null) {
            long end = ctx.publications.endOfClosedSession(topicId, session);
            if (end >= 0 && next >= end) {
                // the publication closed and the subscriber had every frame of it (or it published none): nothing is lost
                ctx.counters.increment(RdmaCounter.RESUMES_SERVED);
                return;
            }
            refuseResume(c, topicId, session, next, -1);
            return;
        }
        pub.beginReplay(); // from here the publication claims nothing new; stepReplay waits for a claim in progress
        replays.add(new Replay(pub, c, topicId, session, next));
    }

    private void refuseResume(final Connection c, final int topicId, final int session, final long next, final long oldest) {
        ctx.counters.increment(RdmaCounter.RESUMES_REFUSED);
        c.pendingControl.resumeFailed(topicId, session, config.retentionFrames(), next, oldest);
        control.flush(c, false, false); // before any new frame of the topic reaches the subscriber
    }

    /** @return whether a replay for {@code topicId} to {@code c} is pending */
    boolean replayPending(final Connection c, final int topicId) {
        for (int i = 0; i < replays.size(); i++) {
            Replay r = replays.get(i);
            if (r.c == c && r.topicId == topicId) {
                return true;
            }
        }
        return false;
    }

    /**
     * Publisher: advances one replay. Arms it once the publisher is not between claim and commit (the ring is
     * stable from then on), checks the window, then re-posts retained frames from {@code next} on, each under a
     * credit of the subscriber's connection and a frame of the topic's window on it; without either it waits for the
     * next CREDIT or TOPIC_CREDIT.
     *
     * @return work done
     */
    private int stepReplay(final Replay r) {
        if (r.c.closed || r.pub.isClosing()) {
            return finishReplay(r);
        }
        if (!r.armed) {
            if (r.pub.claimInProgress()) {
                return 0;
            }
            long oldest = r.pub.oldestRetainedCommit();
            long end = r.pub.commits();
            if (oldest > 0 && r.pub.sequenceOfCommit(oldest) > r.next) {
                // frames next .. oldest-1 were overwritten: the subscriber must learn it, not get a silent gap
                refuseResume(r.c, r.topicId, r.session, r.next, r.pub.sequenceOfCommit(oldest));
                return finishReplay(r) + 1;
            }
            long k = oldest;
            while (k < end && r.pub.sequenceOfCommit(k) < r.next) {
                k++;
            }
            r.k = k;
            r.end = end;
            r.armed = true;
            ctx.counters.increment(RdmaCounter.RESUMES_SERVED);
        }
        int posted = 0;
        while (r.k < r.end) {
            if (!r.c.live()) {
                return finishReplay(r) + posted;
            }
            if (!r.c.tryTakeCredit()) {
                return posted;
            }
            AtomicInteger window = r.c.topicWindow(r.topicId);
            if (!Connection.tryTake(window)) {
                r.c.credits.incrementAndGet();
                return posted; // the subscriber still holds a window's worth of the topic: wait for its TOPIC_CREDIT
            }
            if (!r.pub.replay(r.c, r.k)) {
                r.c.credits.incrementAndGet();
                window.incrementAndGet();
                fail.accept(r.c, null);
                return finishReplay(r) + posted;
            }
            r.k++;
            posted++;
            ctx.counters.increment(RdmaCounter.FRAMES_REPLAYED);
        }
        if (!r.startsQueued) {
            // the topic's other publications (the replayed one's START is ignored: the subscriber resumes it) start here
            r.startsQueued = true;
            queueStarts(r.c, r.topicId);
        }
        if (!r.c.closed && !r.c.pendingControl.isEmpty()) {
            return posted; // the route waits for the STARTs to be posted, the publication for the route
        }
        return finishReplay(r) + posted;
    }

    /**
     * Ends a replay. The subscriber's RESUME is its subscription to the topic (it asks only for topics it subscribes,
     * and its SUB follows): the route is added here whether or not that SUB has arrived yet, and before the
     * publication may claim again. Otherwise a frame committed between the replay's end and the route (or the SUB's
     * arrival, which can come in a later completion batch) reaches every subscriber but this one: a RELIABLE gap.
     */
    private int finishReplay(final Replay r) {
        replays.remove(r);
        if (!r.c.closed && !replayPending(r.c, r.topicId)) {
            r.c.deferredSubs.remove(r.topicId);
            if (!r.c.unsubscribedDuringReplay.remove(r.topicId)) {
                ctx.publications.route(r.topicId).add(r.c);
            }
        }
        r.pub.endReplay(); // after the route: a claim that sees the replay over also sees this subscriber
        return 1;
    }

    /** Subscriber: the publisher cannot resume a stream: fail the topic's local sinks with a typed error. */
    void onResumeFailed(final Connection c, final int topicId, final int session, final int retentionFrames, final long next,
                                final long oldest) {
        ctx.counters.increment(RdmaCounter.RESUME_FAILURES);
        c.consumed.remove(resumeKey(topicId, session));
        RdmaSubscription[] subs = local.get(topicId);
        if (subs == null) {
            return;
        }
        String topicName = subs[0].topic.name();
        String why = oldest < 0
                ? "the publisher no longer has that session (its publication was closed)"
                : "the publisher retains sequences from " + oldest + " on (" + RdmaTransportConfig.RETENTION_FRAMES + "=" + retentionFrames
                + " on the publisher), so " + (oldest - next) + " frames (" + next + ".." + (oldest - 1) + ") are lost";
        String message = "topic " + topicName + ": cannot resume publisher session " + session + " of " + c.peer + " at sequence " + next
                + " after a reconnect: " + why + "; raise " + RdmaTransportConfig.RETENTION_FRAMES + " on the publisher for longer outages"
                + " or slower subscribers, then subscribe again";
        for (RdmaSubscription s : subs) {
            if (!s.closed) {
                s.sink.onTransportError(new RetentionExceededException(message, session, next, oldest));
            }
        }
    }

    /** @return the resume-state key of a RELIABLE stream: topic id in the high half, the publisher's session id in the low */
    static long resumeKey(final int topicId, final int sessionId) {
        return ((long) topicId << 32) | (sessionId & 0xFFFF_FFFFL);
    }

    private static void forgetTopic(final Long2LongHashMap m, final int topicId) {
        Long2LongHashMap.KeyIterator it = m.keySet().iterator();
        while (it.hasNext()) {
            if ((int) (it.nextValue() >>> 32) == topicId) {
                it.remove();
            }
        }
    }

    /** Subscriber side: where each RELIABLE stream of a lost peer resumes, and until when it is kept. */
    private record ResumeState(Long2LongHashMap next, long expiresAtNs) {
    }

    /**
     * Publisher side: what waits for STARTs to be posted (poller): the route of {@code routeTopic} to {@code conns[0]}
     * ({@code release} null), or the claims of the new publication {@code release} (its START queued on each of {@code conns}).
     */
    private record StartGate(Connection[] conns, int routeTopic, RdmaPublication release) {
    }

    /** Publisher side: one reconnected subscriber's replay of one session (poller). */
    private static final class Replay {
        final RdmaPublication pub;
        final Connection c;
        final int topicId;
        final int session;
        final long next;
        boolean armed;
        /** Next commit index to re-post, and the end (exclusive), once armed. */
        long k;
        long end;
        /** The topic's STARTs are queued on {@code c}: its route follows once they are posted. */
        boolean startsQueued;

        Replay(final RdmaPublication pub, final Connection c, final int topicId, final int session, final long next) {
            this.pub = pub;
            this.c = c;
            this.topicId = topicId;
            this.session = session;
            this.next = next;
        }
    }
}
