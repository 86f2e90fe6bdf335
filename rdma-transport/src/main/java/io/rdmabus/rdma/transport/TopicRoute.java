package io.rdmabus.rdma.transport;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The connections whose peer subscribes one topic (sender side), each with the topic's window on it (frames the
 * publications of the topic may still send there before the subscriber returns some in a TOPIC_CREDIT; see
 * {@link Connection#topicWindow}). Written by the poller, read by publications on their threads: copy-on-write, one
 * volatile {@link Targets} so a publication sees a whole one (connections and their windows) without a lock; add and
 * remove are synchronized only to keep two writers from losing an update (the poller is the one writer today).
 */
final class TopicRoute {
    /** The route's connections and, at the same index, the topic's window on each. */
    record Targets(Connection[] subscribers, AtomicInteger[] windows) {
    }

    private static final Targets NONE = new Targets(new Connection[0], new AtomicInteger[0]);
    private final int topicId;
    private volatile Targets targets = NONE;

    TopicRoute(final int topicId) {
        this.topicId = topicId;
    }

    Connection[] subscribers() {
        return targets.subscribers();
    }

    /** @return the connections and their windows, one consistent snapshot */
    Targets targets() {
        return targets;
    }

    /** Routes the topic to {@code c} (poller: it owns {@link Connection#topicWindow}). */
    synchronized void add(final Connection c) {
        Targets cur = targets;
        for (Connection s : cur.subscribers()) {
            if (s == c) {
                return;
            }
        }
        Connection[] subs = Arrays.copyOf(cur.subscribers(), cur.subscribers().length + 1);
        AtomicInteger[] windows = Arrays.copyOf(cur.windows(), subs.length);
        subs[subs.length - 1] = c;
        windows[subs.length - 1] = c.topicWindow(topicId);
        targets = new Targets(subs, windows);
    }

    synchronized void remove(final Connection c) {
        Targets cur = targets;
        Connection[] subs = cur.subscribers();
        for (int i = 0; i < subs.length; i++) {
            if (subs[i] == c) {
                Connection[] next = new Connection[subs.length - 1];
                AtomicInteger[] windows = new AtomicInteger[subs.length - 1];
                System.arraycopy(subs, 0, next, 0, i);
                System.arraycopy(subs, i + 1, next, i, subs.length - i - 1);
                System.arraycopy(cur.windows(), 0, windows, 0, i);
                System.arraycopy(cur.windows(), i + 1, windows, i, subs.length - i - 1);
                targets = new Targets(next, windows);
                return;
            }
        }
    }
}
