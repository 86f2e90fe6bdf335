package io.rdmabus.samples.support;

import io.rdmabus.SubscriptionStats;

/** A subscription's counters ({@link SubscriptionStats}) as one line a person reads, for the samples' summaries. */
public final class StatsText {
    private StatsText() {
    }

    /**
     * @param s a subscription's counters, or null
     * @return e.g. {@code delivered 100,000 of 100,000 frames received; gaps 0, dropped by the subscriber 0, duplicates 0,
     *         malformed 0; ring 1,024 slots, 1,024 free}, or {@code no subscription}
     */
    public static String of(final SubscriptionStats s) {
        if (s == null) {
            return "no subscription";
        }
        return String.format("delivered %,d of %,d frames received; gaps %,d, dropped by the subscriber %,d, duplicates %,d, malformed %,d;"
                + " ring %,d slots, %,d free", s.messagesDelivered(), s.framesReceived(), s.gapMessages(), s.droppedBySubscriber(),
            s.duplicates(), s.malformedFrames(), s.ringCapacity(), s.ringFree());
    }
}
