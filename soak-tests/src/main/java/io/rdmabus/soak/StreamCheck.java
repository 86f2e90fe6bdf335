package io.rdmabus.soak;

/**
 * What one subscriber proves about one publisher session of one topic, from the per-publisher sequence in each
 * message and the bus's {@code Received.lostBefore}. The first message seen sets the start (a subscriber that starts
 * or reconnects mid-stream joins live; that is not loss). After it: a sequence ahead of the expected one is a loss
 * (observed gap), one behind is a reordering, an equal one is a duplicate. Each gap is also kept with the wall-clock
 * time it was seen (the first {@link #MAX_GAP_EVENTS}), so the report can say in which fault window a loss happened.
 */
public final class StreamCheck {
    /** Gap events kept with their time; later ones are only counted. */
    public static final int MAX_GAP_EVENTS = 64;
    private final StringBuilder gapEvents = new StringBuilder();
    private int gapEventsKept;
    private long firstMs = -1;
    private long lastMs = -1;
    private long first = -1;
    private long last = -1;
    private long received;
    private long lost;
    private long lossEvents;
    private long duplicated;
    private long reordered;
    private long reportedLost;
    private long badContent;

    /**
     * @param seq        the message's per-publisher sequence
     * @param lostBefore the bus's report of messages lost right before it
     * @param contentOk  whether its checksum/content verified
     */
    public void onMessage(final long seq, final long lostBefore, final boolean contentOk) {
        onMessage(seq, lostBefore, contentOk, System.currentTimeMillis());
    }

    /**
     * @param seq        the message's per-publisher sequence
     * @param lostBefore the bus's report of messages lost right before it
     * @param contentOk  whether its checksum/content verified
     * @param nowMs      wall-clock time of arrival, epoch ms
     */
    public void onMessage(final long seq, final long lostBefore, final boolean contentOk, final long nowMs) {
        received++;
        lastMs = nowMs;
        if (!contentOk) {
            badContent++;
        }
        if (first < 0) {
            firstMs = nowMs;
            first = seq;
            last = seq;
            return; // a report on the first message covers what happened before we joined: not comparable
        }
        reportedLost += lostBefore;
        if (seq == last + 1) {
            last = seq;
        } else if (seq > last + 1) {
            lost += seq - last - 1;
            lossEvents++;
            if (gapEventsKept < MAX_GAP_EVENTS) {
                gapEventsKept++;
                // epochMs:firstMissing:count:reportedByBus
                gapEvents.append(gapEvents.isEmpty() ? "" : ",").append(nowMs).append(':').append(last + 1).append(':').append(seq - last - 1)
                    .append(':').append(lostBefore);
            }
            last = seq;
        } else if (seq == last) {
            duplicated++;
        } else {
            reordered++;
        }
    }

    /** @return messages received */
    public long received() {
        return received;
    }

    /** @return messages missing between the first and the last received (observed gaps) */
    public long lost() {
        return lost;
    }

    /** @return how many separate gaps */
    public long lossEvents() {
        return lossEvents;
    }

    /** @return messages received twice in a row */
    public long duplicated() {
        return duplicated;
    }

    /** @return messages that arrived behind a later one */
    public long reordered() {
        return reordered;
    }

    /** @return sum of lostBefore after the first message (what the bus reported) */
    public long reportedLost() {
        return reportedLost;
    }

    /** @return messages whose content did not verify */
    public long badContent() {
        return badContent;
    }

    /** @return first sequence seen, -1 if none */
    public long first() {
        return first;
    }

    /** @return last in-order sequence seen, -1 if none */
    public long last() {
        return last;
    }

    /** @return wall-clock time of the first message, epoch ms, -1 if none */
    public long firstMs() {
        return firstMs;
    }

    /** @return wall-clock time of the latest message, epoch ms, -1 if none */
    public long lastMs() {
        return lastMs;
    }

    /**
     * @return the first {@link #MAX_GAP_EVENTS} gaps as {@code epochMs:firstMissingSeq:count:reportedByBus}, comma
     *         separated (empty if none)
     */
    public String gapEvents() {
        return gapEvents.toString();
    }

    /** @return a one-line summary, {@code key=value} pairs with long values */
    public String summary() {
        return "received=" + received + " first=" + first + " last=" + last + " lost=" + lost + " lossEvents=" + lossEvents + " reportedLost="
            + reportedLost + " duplicated=" + duplicated + " reordered=" + reordered + " badContent=" + badContent + " firstMs=" + firstMs
            + " lastMs=" + lastMs;
    }
}
