package io.rdmabus.soak.fuzz;

import java.util.HashMap;
import java.util.Map;

/**
 * The sequence rule of {@code docs/wire-format.md} written from the document, independent of the bus's
 * {@code SubscriptionChannel}: fed every well-formed frame of one subscription's topic in the order the bus gets them, it
 * says what the bus must count. Per session: the expected sequence and an undecided suspect.
 */
final class SequenceModel {
    private final boolean reliable;
    private final long bestEffortBound;
    /** Session id to {expected sequence, suspect sequence or -1}. */
    private final Map<Integer, long[]> sessions = new HashMap<>();
    /** Frames taken in sequence (in order, after a gap, or confirming a jump): the bus's {@code framesReceived}. */
    long received;
    /** Frames behind the expectation: the bus's {@code duplicates}. */
    long duplicates;
    /** Frames held as suspects (then refuted, confirmed, replaced or still undecided). */
    long suspects;
    /** Suspects refuted or replaced: the sequence rule's share of the bus's {@code malformedFrames}. */
    long refuted;
    /** Suspects confirmed by their sequence + 1. */
    long confirmed;
    /** Frames counted lost, saturating at {@code Long.MAX_VALUE}: the bus's {@code gapMessages}. */
    long gaps;

    SequenceModel(final boolean reliable, final long bestEffortBound) {
        this.reliable = reliable;
        this.bestEffortBound = bestEffortBound;
    }

    void judge(final int sessionId, final long sequence) {
        final long[] session = sessions.get(sessionId);
        if (session == null) {
            sessions.put(sessionId, new long[] {sequence + 1, -1});
            received++;
            return;
        }
        final long expected = session[0];
        final long suspect = session[1];
        if (suspect >= 0) {
            session[1] = -1;
            if (suspect != Long.MAX_VALUE && sequence == suspect + 1) {
                confirmed++;
                take(session, sequence, sequence - expected);
                return;
            }
            refuted++; // then this frame is judged against the unchanged expectation
        }
        if (sequence < expected) {
            duplicates++;
            return;
        }
        final long jump = sequence - expected;
        if (jump > 0 && (reliable || jump > bestEffortBound)) {
            session[1] = sequence;
            suspects++;
            return;
        }
        take(session, sequence, jump);
    }

    private void take(final long[] session, final long sequence, final long lost) {
        session[0] = sequence + 1;
        received++;
        gaps = Long.MAX_VALUE - gaps < lost ? Long.MAX_VALUE : gaps + lost;
    }

    @Override
    public String toString() {
        return "model[received=" + received + " duplicates=" + duplicates + " suspects=" + suspects + " refuted=" + refuted
            + " confirmed=" + confirmed + " gaps=" + gaps + "]";
    }
}
