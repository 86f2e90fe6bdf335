package io.rdmabus.core;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import io.rdmabus.BusPublication;
import io.rdmabus.PublishStatus;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.codec.CodecException;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.LongHashSet;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.publisher.Flux;

/**
 * The subscribing side of late join (docs/architecture.md, "Late join"): one subscription of a topic with a last-value
 * cache. It subscribes the snapshot topic, then the topic itself, then asks every publisher for a snapshot; per
 * publisher session it buffers live messages until that session's snapshot arrives, then delivers the snapshot's
 * values (in their publish order) and the live messages after the snapshot's last sequence. The seam is proven by
 * sequences: a snapshot is used only if the live stream continues it (the first live message of the session that it
 * does not cover is the next sequence); a snapshot older than the first buffered message is thrown away and asked for
 * again. A session whose first message is its sequence 0 started after the join and needs no snapshot.
 *
 * <p>Owner: the events (live messages, snapshot parts, ticks) are merged into one serialized stream, so this state has
 * one thread at a time and no lock.
 *
 * @param <T> value type
 */
final class LateJoin<T> {
    private static final Logger LOG = LoggerFactory.getLogger(LateJoin.class);
    static final Duration TICK = Duration.ofMillis(100);
    /** Ticks at the start during which the join asks (every {@link #ASK_EVERY} ticks) until a first snapshot arrives. */
    static final int INITIAL_TICKS = 20;
    static final int ASK_EVERY = 3;
    /** Ticks a session waits for its snapshot before its live messages are delivered without one (WARN). */
    static final int GIVE_UP_TICKS = 100;
    /** Ticks a snapshot of a session with no live message yet is held, waiting for the live stream to prove the seam. */
    static final int HOLD_TICKS = 3;
    /** Live messages a subscription buffers while it waits for snapshots; more fails the subscription. */
    static final int MAX_BUFFERED = 65_536;

    private final Topic<T> topic;
    private final BusPublication<byte[]> requests;
    private final Int2ObjectHashMap<Session<T>> sessions = new Int2ObjectHashMap<>();
    private final LongHashSet requestIds = new LongHashSet();
    private final Map<List<Long>, byte[][]> partials = new HashMap<>();
    private int ticks;
    private int lastAskTick = Integer.MIN_VALUE / 2;
    private boolean anySnapshot;
    private int buffered;

    private static final class Session<T> {
        final ArrayDeque<Received<T>> buffer = new ArrayDeque<>();
        boolean pending;
        /** The live stream has not yet shown that it continues the applied snapshot. */
        boolean unproven;
        long lastSequence = -1;
        /** Snapshot entries up to this sequence were delivered already (a repair delivers only newer ones). */
        long deliveredUpTo = -1;
        int pendingSinceTick;
        /** A snapshot received before any live message of the session, held until one proves the seam (or a quiet while). */
        byte[][] held;
        long heldLastSequence;
        int heldSinceTick;
    }

    /** A part of a snapshot, as received on the snapshot topic. */
    record Part(Received<byte[]> received) {
    }

    LateJoin(final Topic<T> topic, final BusPublication<byte[]> requests) {
        this.topic = topic;
        this.requests = requests;
    }

    static <T> Flux<Received<T>> flux(final DefaultBus bus, final Topic<T> topic, final SubscribeOptions<T> options) {
        return Flux.defer(() -> {
            final LateJoin<T> join = new LateJoin<>(topic, bus.publication(LastValueProtocol.requestTopic(topic)));
            final Flux<Object> parts = bus.subscribeDirect(LastValueProtocol.snapshotTopic(topic), SubscribeOptions.<byte[]>defaults())
                .map(Part::new);
            return bus.subscribeDirect(topic, options)
                .publish(live -> Flux.merge(
                    parts.takeUntilOther(live.then()),
                    live.map(r -> (Object) r),
                    Flux.interval(TICK).onBackpressureDrop().map(t -> (Object) t).takeUntilOther(live.then())))
                .concatMapIterable(join::onEvent)
                .doFinally(signal -> join.requests.close());
        });
    }

    @SuppressWarnings("unchecked")
    List<Received<T>> onEvent(final Object event) {
        if (event instanceof Long) {
            return onTick();
        }
        if (event instanceof Part part) {
            return onPart(part.received());
        }
        return onLive((Received<T>) event);
    }

    private List<Received<T>> onLive(final Received<T> r) {
        Session<T> s = sessions.get(r.sessionId());
        if (s == null) {
            s = new Session<>();
            sessions.put(r.sessionId(), s);
            if (r.sequence() == 0 && r.lostBefore() == 0) {
                s.lastSequence = 0; // seen from its start: nothing to catch up
                return List.of(r);
            }
            return startPending(s, r, -1);
        }
        if (s.pending) {
            buffer(s, r);
            return List.of();
        }
        if (s.held != null) {
            final byte[][] held = s.held;
            s.held = null;
            if (r.sequence() == 0 && r.lostBefore() == 0) {
                s.lastSequence = 0; // the stream from its start after all: every message, none conflated
                return List.of(r);
            }
            if (r.sequence() > s.heldLastSequence + 1) {
                return startPending(s, r, -1); // the stream reached us after the snapshot was taken: ask again
            }
            final List<Received<T>> out = entries(r.sessionId(), held, -1);
            s.lastSequence = s.heldLastSequence;
            s.deliveredUpTo = s.heldLastSequence;
            if (r.sequence() > s.lastSequence) {
                out.add(r);
                s.lastSequence = r.sequence();
            }
            return out;
        }
        if (r.sequence() <= s.lastSequence) {
            s.unproven = false; // the snapshot covers it, and the stream reached this subscription before the snapshot's end
            return List.of();
        }
        if (s.unproven) {
            s.unproven = false;
            if (r.sequence() > s.lastSequence + 1) {
                // published after the snapshot but before this subscription was connected: ask again, deliver what was missed
                return startPending(s, r, s.deliveredUpTo);
            }
        }
        s.lastSequence = r.sequence();
        return List.of(r);
    }

    private List<Received<T>> startPending(final Session<T> s, final Received<T> r, final long deliveredUpTo) {
        s.pending = true;
        s.pendingSinceTick = ticks;
        s.deliveredUpTo = deliveredUpTo;
        buffer(s, r);
        ask();
        return List.of();
    }

    private void buffer(final Session<T> s, final Received<T> r) {
        if (++buffered > MAX_BUFFERED) {
            throw new IllegalStateException("topic " + topic.name() + ": late join buffered " + MAX_BUFFERED
                + " live messages waiting for snapshots; no publisher answered in time");
        }
        s.buffer.addLast(r);
    }

    private List<Received<T>> onPart(final Received<byte[]> received) {
        final byte[] bytes = received.value();
        final UnsafeBuffer part = new UnsafeBuffer(bytes);
        try {
            LastValueProtocol.checkPart(part, bytes.length);
        } catch (final CodecException ex) {
            LOG.warn("topic {}: dropped a malformed snapshot part: {}", topic.name(), ex.getMessage());
            return List.of();
        }
        final long requestId = part.getLong(0);
        if (!requestIds.contains(requestId) || part.getInt(12) != topic.topicId()) {
            return List.of(); // another subscriber's
        }
        final int sessionId = part.getInt(8);
        final int index = part.getInt(24);
        final int count = part.getInt(28);
        if (count < 1 || index < 0 || index >= count) {
            LOG.warn("topic {}: dropped a snapshot part {} of {}", topic.name(), index, count);
            return List.of();
        }
        final List<Long> key = List.of(requestId, (long) sessionId);
        final byte[][] parts = partials.computeIfAbsent(key, k -> new byte[count][]);
        if (parts.length != count) {
            return List.of();
        }
        parts[index] = bytes;
        for (final byte[] p : parts) {
            if (p == null) {
                return List.of();
            }
        }
        partials.remove(key);
        return apply(sessionId, part.getLong(16), parts);
    }

    private List<Received<T>> apply(final int sessionId, final long lastSequence, final byte[][] parts) {
        Session<T> s = sessions.get(sessionId);
        if (s == null) {
            s = new Session<>();
            sessions.put(sessionId, s);
        }
        if (!s.pending) {
            if (s.held == null && (s.lastSequence >= 0 || s.unproven)) {
                return List.of(); // already live: a reply to an earlier request, or one for a session seen from its start
            }
            anySnapshot = true;
            s.held = parts; // no live message yet: held until one proves the seam (the newest reply wins)
            s.heldLastSequence = lastSequence;
            s.heldSinceTick = ticks;
            return List.of();
        }
        if (s.buffer.peekFirst().sequence() > lastSequence + 1) {
            ask(); // older than what the live stream already shows: not continued by it
            return List.of();
        }
        anySnapshot = true;
        final List<Received<T>> out = entries(sessionId, parts, s.deliveredUpTo);
        s.lastSequence = lastSequence;
        for (final Received<T> r : s.buffer) {
            if (r.sequence() > s.lastSequence) {
                out.add(r);
                s.lastSequence = r.sequence();
            }
        }
        buffered -= s.buffer.size();
        s.buffer.clear();
        s.pending = false;
        s.unproven = false;
        s.deliveredUpTo = lastSequence;
        return out;
    }

    private List<Received<T>> entries(final int sessionId, final byte[][] parts, final long after) {
        final List<Received<T>> out = new ArrayList<>();
        for (final byte[] bytes : parts) {
            final UnsafeBuffer part = new UnsafeBuffer(bytes);
            int offset = LastValueProtocol.PART_HEADER;
            final int entries = part.getInt(32);
            for (int i = 0; i < entries; i++) {
                final long sequence = part.getLong(offset + 8);
                final long timestampNs = part.getLong(offset + 16);
                final int length = part.getInt(offset + 24);
                if (sequence > after) {
                    out.add(new Received<>(topic.codec().decode(part, offset + LastValueProtocol.ENTRY_HEADER, length), sessionId,
                        sequence, timestampNs, 0));
                }
                offset += LastValueProtocol.ENTRY_HEADER + length;
            }
        }
        return out;
    }

    private List<Received<T>> onTick() {
        ticks++;
        List<Received<T>> out = List.of();
        boolean anyPending = false;
        for (final Int2ObjectHashMap<Session<T>>.EntryIterator it = sessions.entrySet().iterator(); it.hasNext();) {
            it.next();
            final Session<T> s = it.getValue();
            if (s.held != null && ticks - s.heldSinceTick >= HOLD_TICKS) {
                // a quiet publisher: deliver its snapshot now; its next live message proves the seam or asks again
                out = out.isEmpty() ? new ArrayList<>() : out;
                out.addAll(entries(it.getIntKey(), s.held, -1));
                s.lastSequence = s.heldLastSequence;
                s.deliveredUpTo = s.heldLastSequence;
                s.unproven = true;
                s.held = null;
            }
            if (!s.pending) {
                continue;
            }
            if (ticks - s.pendingSinceTick < GIVE_UP_TICKS) {
                anyPending = true;
                continue;
            }
            LOG.warn("topic {}: no snapshot from publisher session {} within {} ms; delivering its live stream without one",
                topic.name(), Integer.toHexString(it.getIntKey()), GIVE_UP_TICKS * TICK.toMillis());
            out = out.isEmpty() ? new ArrayList<>() : out;
            out.addAll(s.buffer);
            s.lastSequence = s.buffer.peekLast().sequence();
            buffered -= s.buffer.size();
            s.buffer.clear();
            s.pending = false;
        }
        if ((anyPending || !anySnapshot && ticks <= INITIAL_TICKS) && ticks - lastAskTick >= ASK_EVERY) {
            ask();
        }
        return out;
    }

    /** Publishes a request; one that is not taken now is tried again on a later tick. */
    private void ask() {
        final long requestId = ThreadLocalRandom.current().nextLong();
        final UnsafeBuffer request = new UnsafeBuffer(new byte[LastValueProtocol.REQUEST_LENGTH]);
        request.putLong(0, requestId);
        request.putInt(8, topic.topicId());
        final int status = requests.offer(request.byteArray());
        if (status == PublishStatus.OK) {
            requestIds.add(requestId);
            lastAskTick = ticks;
        }
    }
}
