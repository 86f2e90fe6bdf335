package io.rdmabus.rdma.transport;

/**
 * The connections whose peer subscribes one topic (sender side). Written by the poller, read by publications on their
 * threads: copy-on-write, the array volatile so a publication sees a whole one without a lock; add and remove are
 * synchronized only to keep two writers from losing an update (the poller is the one writer today).
 */
final class TopicRoute {
    private static final Connection[] NONE = new Connection[0];
    private volatile Connection[] subscribers = NONE;

    Connection[] subscribers() {
        return subscribers;
    }

    synchronized void add(final Connection c) {
        for (Connection s : subscribers) {
            if (s == c) {
                return;
            }
        }
        Connection[] next = java.util.Arrays.copyOf(subscribers, subscribers.length + 1);
        next[next.length - 1] = c;
        subscribers = next;
    }

    synchronized void remove(final Connection c) {
        Connection[] cur = subscribers;
        for (int i = 0; i < cur.length; i++) {
            if (cur[i] == c) {
                Connection[] next = new Connection[cur.length - 1];
                System.arraycopy(cur, 0, next, 0, i);
                System.arraycopy(cur, i + 1, next, i, cur.length - i - 1);
                subscribers = next;
                return;
            }
        }
    }
}
