package io.rdmabus.rdma.transport;

import io.rdmabus.TransportException;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntFunction;

import org.agrona.collections.Long2LongHashMap;

/**
 * The transport's RC publications, and the topic routes (which connections subscribe each topic).
 *
 * <p>Writers: application threads add and remove publications ({@code addPublication}, a publication's close). Readers:
 * the poller finds a send completion's publication by pool index ({@link #pools()}, lock-free: an
 * {@link AtomicReferenceArray}) and a resumed stream's publication ({@link #findRetaining}); the cm agent lists the
 * published topics for adverts ({@link #publishedTopics}); {@code close()} closes them all. The list is guarded by its
 * own monitor: those are rare control-path reads, never on a per-frame path. Routes: the poller adds and removes
 * subscribers, publications read them ({@link TopicRoute} is copy-on-write).
 */
final class PublicationTable {
    /** Pool indexes: a wr_id carries 12 bits of it. */
    static final int SIZE = 4096;
    /** Closed RELIABLE sessions remembered for a late RESUME; beyond this many the oldest is forgotten. */
    static final int CLOSED_SESSIONS = 4096;

    private final AtomicReferenceArray<RdmaPublication> pools = new AtomicReferenceArray<>(SIZE);
    private final AtomicInteger nextPool = new AtomicInteger();
    private final List<RdmaPublication> publications = new ArrayList<>();
    private final ConcurrentHashMap<Integer, TopicRoute> routes = new ConcurrentHashMap<>();
    /** Per closed RELIABLE session (ReliableResume.resumeKey): the sequence after its last frame; under the list's monitor. */
    private final Long2LongHashMap closedSessions = new Long2LongHashMap(-1);
    private final ArrayDeque<Long> closedOrder = new ArrayDeque<>();

    /**
     * Adds the publication {@code factory} builds for a free pool index (application thread).
     *
     * @throws TransportException when every pool index is in use
     */
    RdmaPublication add(final IntFunction<RdmaPublication> factory) {
        int index = -1;
        for (int i = 0; i < SIZE && index < 0; i++) {
            int candidate = nextPool.getAndIncrement() & (SIZE - 1);
            if (pools.get(candidate) == null) {
                index = candidate;
            }
        }
        if (index < 0) {
            throw new TransportException("Too many rdma publications open (" + SIZE + ")");
        }
        RdmaPublication pub = factory.apply(index);
        pools.set(index, pub);
        synchronized (publications) {
            publications.add(pub);
        }
        return pub;
    }

    void remove(final RdmaPublication pub) {
        pools.compareAndSet(pub.poolIndex, pub, null);
        synchronized (publications) {
            publications.remove(pub);
        }
    }

    /** @return the publications by pool index, for send completions (poller) */
    AtomicReferenceArray<RdmaPublication> pools() {
        return pools;
    }

    /** @return a copy of the open publications */
    List<RdmaPublication> snapshot() {
        synchronized (publications) {
            return new ArrayList<>(publications);
        }
    }

    /** @return the open publication of {@code topicId} that retains frames and owns {@code session}, or null (poller) */
    RdmaPublication findRetaining(final int topicId, final int session) {
        synchronized (publications) {
            for (RdmaPublication p : publications) {
                if (p.retains() && p.topicId() == topicId && p.ownsSession(session) && !p.isClosing()) {
                    return p;
                }
            }
        }
        return null;
    }

    /**
     * @return the open publications of {@code topicId} that retain frames and know their session: those a subscriber's
     *     connection gets a START of when the topic is routed to it (poller; a new list, control path only)
     */
    List<RdmaPublication> startsOf(final int topicId) {
        List<RdmaPublication> out = new ArrayList<>(2);
        synchronized (publications) {
            for (RdmaPublication p : publications) {
                if (p.retains() && p.topicId() == topicId && p.hasSession() && !p.isClosing()) {
                    out.add(p);
                }
            }
        }
        return out;
    }

    /**
     * Remembers where the session of the closing RELIABLE publication {@code pub} ends (the sequence after its last
     * committed frame), so a subscriber that resumes it having had every frame is answered without an error (application
     * thread, at close; called again as it leaves the table, after its last commit).
     */
    void sessionEnded(final RdmaPublication pub) {
        if (!pub.retains() || !pub.hasSession()) {
            return;
        }
        long key = ReliableResume.resumeKey(pub.topicId(), pub.sessionId());
        synchronized (publications) {
            if (closedSessions.put(key, pub.nextStreamSequence()) == closedSessions.missingValue()) {
                closedOrder.add(key);
                if (closedOrder.size() > CLOSED_SESSIONS) {
                    closedSessions.remove(closedOrder.poll().longValue());
                }
            }
        }
    }

    /** @return the sequence after the last frame of the closed session {@code session} of {@code topicId}, or -1 if not known (poller) */
    long endOfClosedSession(final int topicId, final int session) {
        synchronized (publications) {
            return closedSessions.get(ReliableResume.resumeKey(topicId, session));
        }
    }

    /** Adds the topic id of every open publication to {@code out} (cm agent, for adverts). */
    void publishedTopics(final SortedSet<Integer> out) {
        synchronized (publications) {
            for (RdmaPublication p : publications) {
                out.add(p.topicId());
            }
        }
    }

    /** @return the route of {@code topicId}, created on first use (any thread) */
    TopicRoute route(final int topicId) {
        return routes.computeIfAbsent(topicId, TopicRoute::new);
    }

    /** Removes {@code c} from every route (poller). */
    void removeFromRoutes(final Connection c) {
        for (TopicRoute r : routes.values()) {
            r.remove(c);
        }
    }
}
