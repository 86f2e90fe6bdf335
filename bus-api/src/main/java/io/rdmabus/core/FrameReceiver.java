package io.rdmabus.core;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

import io.rdmabus.Delivery;
import io.rdmabus.Topic;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.SubscriptionSink;

import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receive side of one subscription, on the transport's receive thread: checks each frame's header (unless the
 * transport did and says so through {@link #onValidatedFrame}), applies the
 * sequence rule per publisher session (docs/wire-format.md), reassembles fragmented messages and hands each whole
 * message to {@link #publish}. A subclass decides where messages go: a ring drained by another agent
 * ({@link SubscriptionChannel}), or a handler that reads the frame in place ({@link InPlaceSubscription}).
 *
 * <p>Owner: the transport's receive thread (one thread at a time per subscription, as {@link SubscriptionSink} says).
 * The counters are read by any thread; the ones only this thread writes are updated with an ordered store, not an
 * atomic add.
 */
abstract class FrameReceiver implements SubscriptionSink {
    static final long LOG_FIRST_N = 10;
    static final long LOG_EVERY_N = 1000;
    /** From {@link #tryClaim()}: no room for the message now. */
    static final long NO_ROOM = -1;
    /** From {@link #claimForReceive()}: no slot; {@link #publish} hands the message straight to the subscriber. */
    static final long DIRECT = -2;
    private static final Logger LOG = LoggerFactory.getLogger(FrameReceiver.class);

    final Topic<?> topic;
    private final int maxFrameLength;
    /**
     * Publisher sessions remembered per subscription. A publication is a new session, so a long-lived subscription whose
     * publishers come and go (or a hostile sender inventing session ids) would otherwise grow its table for ever.
     */
    static final int MAX_SESSIONS = 4096;

    private final Int2ObjectHashMap<SessionState> sessions = new Int2ObjectHashMap<>();
    /** +1 each time the frames switch to another session (receive thread): the sessions' {@code lastActive} clock. */
    private long frameClock;
    /** The session of the previous frame (most streams have one publisher): saves the map lookup. Receive thread. */
    private SessionState lastSession;
    private int lastSessionId;

    // written by the receive thread only
    final AtomicLong framesReceived = new AtomicLong();
    /** Payload bytes of the frames counted in framesReceived. */
    final AtomicLong bytesReceived = new AtomicLong();
    final AtomicLong gaps = new AtomicLong();
    final AtomicLong duplicates = new AtomicLong();
    /** Sessions forgotten by {@link #forgetIdleSessions()}. */
    final AtomicLong sessionsForgotten = new AtomicLong();
    // written by the receive thread and the delivering thread
    final AtomicLong malformed = new AtomicLong();
    final AtomicLong dropped = new AtomicLong();

    volatile boolean closed;

    FrameReceiver(final Topic<?> topic, final int maxFrameLength) {
        this.topic = topic;
        this.maxFrameLength = maxFrameLength;
    }

    /** @return a slot for a whole message, or {@link #NO_ROOM} */
    abstract long tryClaim();

    /**
     * Where a whole message that the transport's receive thread is about to complete goes: by default a slot as
     * {@link #tryClaim()} gives; a subclass may answer {@link #DIRECT} when it can take the message at once.
     *
     * @return a slot, {@link #NO_ROOM} or {@link #DIRECT}
     */
    long claimForReceive() {
        return tryClaim();
    }

    /** Hands over a whole message; {@code src} is valid only during the call. */
    abstract void publish(long slot, DirectBuffer src, int srcOffset, int length, int sessionId, long sequence, long timestampNs,
                          long lostBefore);

    /** A claimed slot, or a {@link #DIRECT} claim, that carries no message (its fragments were lost). */
    abstract void skip(long slot);

    /** Validates the header (the transport is not trusted with it here), then takes the frame as {@link #take} does. */
    @Override
    public int onFrame(final DirectBuffer buffer, final int offset, final int length) {
        if (closed) {
            return CONTINUE;
        }
        final int validity = FrameHeader.validate(buffer, offset, length, maxFrameLength);
        if (validity != FrameHeader.VALID) {
            countMalformed(FrameHeader.describe(validity), length);
            return CONTINUE;
        }
        final int verdict = take(buffer, offset, length);
        return verdict == DROPPED ? CONTINUE : verdict;
    }

    /** The transport validated the header (see {@link SubscriptionSink#onValidatedFrame}): takes the frame without doing so again. */
    @Override
    public int onValidatedFrame(final DirectBuffer buffer, final int offset, final int length) {
        if (closed) {
            return DROPPED;
        }
        return take(buffer, offset, length);
    }

    /**
     * Applies the topic check and the sequence rule to a frame with a valid header.
     *
     * @return {@link #CONTINUE} if the session's stream took it, {@link #DROPPED} if not, {@link #BACK_PRESSURE}
     */
    private int take(final DirectBuffer buffer, final int offset, final int length) {
        final int topicId = FrameHeader.topicId(buffer, offset);
        if (topicId != topic.topicId()) {
            countMalformed("topic id " + topicId + " is not " + topic.name() + "'s " + topic.topicId(), length);
            return DROPPED;
        }
        final int sessionId = FrameHeader.sessionId(buffer, offset);
        SessionState session = lastSession;
        if (session == null || sessionId != lastSessionId) {
            session = sessions.get(sessionId);
            if (session == null) {
                if (sessions.size() >= MAX_SESSIONS) {
                    forgetIdleSessions();
                }
                session = new SessionState();
                sessions.put(sessionId, session);
            }
            lastSessionId = sessionId;
            lastSession = session;
            // stamped when the stream switches to the session: a session's later frames in a row change no order among them
            session.lastActive = ++frameClock;
        }
        // the sequence rule of docs/wire-format.md: in order, duplicate, gap, or a suspect jump the next frame decides
        final long sequence = FrameHeader.sequence(buffer, offset);
        final long expected = session.nextSequence;
        final long gap;
        if (expected < 0) {
            gap = 0; // the session's first frame sets the expectation: joining a stream mid-way has lost nothing
        } else if (session.suspectSequence >= 0 && sequence == session.suspectSequence + 1) {
            gap = sequence - expected; // the suspect is confirmed: the stream moved on, and the suspect is among the lost
        } else if (sequence < expected) {
            decideSuspect(session, sessionId, sequence);
            increment(duplicates);
            return DROPPED;
        } else {
            gap = sequence - expected;
            if (gap > 0 && (topic.delivery() == Delivery.RELIABLE || gap > FrameHeader.BEST_EFFORT_GAP_BOUND)) {
                // a jump the session's next frame must confirm: dropped for now, the expectation stays
                decideSuspect(session, sessionId, sequence);
                session.suspectSequence = sequence;
                return DROPPED;
            }
        }
        final int flags = FrameHeader.flags(buffer, offset);
        final boolean end = (flags & FrameHeader.FLAG_END) != 0;

        long slot = NO_ROOM;
        if (end) {
            slot = claimForReceive();
            if (slot == NO_ROOM) {
                if (topic.delivery() == Delivery.RELIABLE) {
                    return BACK_PRESSURE; // nothing consumed, no state changed; the transport offers this frame again later
                }
                // best effort never slows the publisher: the datagram is dropped here, counted and reported
                decideSuspect(session, sessionId, sequence);
                countFrame(length);
                dropped.incrementAndGet();
                recordGap(session, gap);
                session.lostPending++;
                session.reassemblyLength = -1;
                session.nextSequence = sequence + 1;
                return CONTINUE;
            }
        }
        decideSuspect(session, sessionId, sequence);
        countFrame(length);
        recordGap(session, gap);
        session.nextSequence = sequence + 1;
        reassemble(slot, session, buffer, offset, length, sessionId, sequence, gap, flags);
        return CONTINUE;
    }

    /**
     * The table is full and a new session arrives: forgets the half of the sessions idle longest (one sort per
     * {@code MAX_SESSIONS / 2} new sessions, so a flood of invented ids costs little per frame). A forgotten session
     * that sends again starts over as a new one: its next frame sets the expectation, and a message it was reassembling
     * is lost.
     */
    private void forgetIdleSessions() {
        final long[] ages = new long[sessions.size()];
        final int[] ids = new int[ages.length];
        final int[] n = {0};
        sessions.forEachInt((id, session) -> {
            ids[n[0]] = id;
            ages[n[0]++] = session.lastActive;
        });
        final long[] sorted = ages.clone();
        Arrays.sort(sorted);
        final long cutoff = sorted[sorted.length / 2];
        int forgotten = 0;
        for (int i = 0; i < ids.length; i++) {
            if (ages[i] < cutoff) {
                sessions.remove(ids[i]); // not while iterating: the open-addressed table moves entries as it removes
                forgotten++;
            }
        }
        lastSession = null;
        final long before = sessionsForgotten.get();
        final long total = before + forgotten;
        sessionsForgotten.lazySet(total);
        if (before == 0 || before / (LOG_EVERY_N * MAX_SESSIONS) != total / (LOG_EVERY_N * MAX_SESSIONS)) {
            LOG.warn("topic {}: more than {} publisher sessions seen; forgot the {} idle longest ({} so far, counter "
                + "sessionsForgotten). A forgotten session that sends again starts over as a new one", topic.name(), MAX_SESSIONS,
                forgotten, total);
        }
    }

    /** @return publisher sessions remembered now (receive thread; tests) */
    int sessionCount() {
        return sessions.size();
    }

    /**
     * Puts a frame the sequence rule took into its message: a whole message is published at once, fragments are
     * collected in the session's reassembly buffer until the end fragment.
     *
     * @param slot the claimed slot for an end fragment, else {@link #NO_ROOM}
     * @param gap  frames lost just before this one (already counted)
     */
    private void reassemble(final long slot, final SessionState session, final DirectBuffer buffer, final int offset, final int length,
                            final int sessionId, final long sequence, final long gap, final int flags) {
        final boolean end = (flags & FrameHeader.FLAG_END) != 0;
        final int payloadOffset = offset + FrameHeader.LENGTH;
        final int payloadLength = length - FrameHeader.LENGTH;
        final long timestampNs = FrameHeader.timestampNs(buffer, offset);
        final boolean begin = (flags & FrameHeader.FLAG_BEGIN) != 0;

        // A message broken by missing frames counts once: a gap already counted its frames as lost.
        if (begin && end) {
            if (session.reassemblyLength >= 0) {
                if (gap == 0) {
                    session.lostPending++; // a fragmented message lost its tail
                }
                session.reassemblyLength = -1;
            }
            publishMessage(slot, session, buffer, payloadOffset, payloadLength, sessionId, sequence, timestampNs);
            return;
        }
        if (begin) {
            if (session.reassemblyLength >= 0 && gap == 0) {
                session.lostPending++;
            }
            session.reassemblyLength = 0;
            session.reassemblyFirstSequence = sequence;
            session.reassemblyTimestampNs = timestampNs;
        } else if (session.reassemblyLength < 0 || gap > 0) {
            // a middle or end fragment without its beginning: the gap already counted the loss, or we joined
            // the stream in the middle of a message, which is no loss
            session.reassemblyLength = -1;
            skipIfClaimed(slot);
            return;
        }
        if (session.reassemblyLength + payloadLength > topic.maxMessageLength()) {
            countMalformed("reassembled message exceeds maxMessageLength " + topic.maxMessageLength(), length);
            session.lostPending++;
            session.reassemblyLength = -1;
            skipIfClaimed(slot);
            return;
        }
        session.reassembly().putBytes(session.reassemblyLength, buffer, payloadOffset, payloadLength);
        session.reassemblyLength += payloadLength;
        if (end) {
            final int messageLength = session.reassemblyLength;
            session.reassemblyLength = -1;
            publishMessage(slot, session, session.reassembly(), 0, messageLength, sessionId, session.reassemblyFirstSequence,
                session.reassemblyTimestampNs);
        }
    }

    private void publishMessage(final long slot, final SessionState session, final DirectBuffer src, final int srcOffset, final int length,
                                final int sessionId, final long sequence, final long timestampNs) {
        final long lostBefore = session.lostPending;
        session.lostPending = 0;
        publish(slot, src, srcOffset, length, sessionId, sequence, timestampNs, lostBefore);
    }

    /** A slot or a {@link #DIRECT} claim that carries no message after all: given back (a direct one lets its emitter go). */
    private void skipIfClaimed(final long slot) {
        if (slot != NO_ROOM) {
            skip(slot);
        }
    }

    /**
     * The session's frame after a suspect decides it: {@code sequence} one past the suspect confirms the jump (the caller
     * counts it in the gap); any other sequence means the suspect was corrupt: counted as malformed. Either way the
     * session has no suspect afterwards. No allocation unless it logs.
     */
    private void decideSuspect(final SessionState session, final int sessionId, final long sequence) {
        final long suspect = session.suspectSequence;
        if (suspect < 0) {
            return;
        }
        session.suspectSequence = -1;
        if (sequence != suspect + 1) {
            final long n = malformed.incrementAndGet();
            if (n <= LOG_FIRST_N || n % LOG_EVERY_N == 0) {
                LOG.warn("topic {}: dropped malformed frame #{}: session {} sequence {} jumped ahead of the expected {} and the "
                    + "session's next frame ({}) did not follow it", topic.name(), n, Integer.toHexString(sessionId), suspect,
                    session.nextSequence, sequence);
            }
        }
    }

    private void recordGap(final SessionState session, final long gap) {
        if (gap > 0) {
            // saturating: a confirmed jump can be near 2^63 (two consecutive frames forged alike), and a counter that
            // wraps negative lies
            gaps.lazySet(saturatedAdd(gaps.get(), gap));
            session.lostPending = saturatedAdd(session.lostPending, gap);
        }
    }

    static long saturatedAdd(final long a, final long b) {
        final long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }

    /** A frame the sequence rule took (delivered or dropped for room): counted with its payload bytes. */
    private void countFrame(final int frameLength) {
        increment(framesReceived);
        bytesReceived.lazySet(bytesReceived.get() + frameLength - FrameHeader.LENGTH);
    }

    /** A counter with one writer: an ordered store is enough for readers on other threads, and costs no atomic add. */
    static void increment(final AtomicLong singleWriterCounter) {
        singleWriterCounter.lazySet(singleWriterCounter.get() + 1);
    }

    void countMalformed(final String why, final int length) {
        final long n = malformed.incrementAndGet();
        if (n <= LOG_FIRST_N || n % LOG_EVERY_N == 0) {
            LOG.warn("topic {}: dropped malformed frame #{} ({} bytes): {}", topic.name(), n, length, why);
        }
    }
}
