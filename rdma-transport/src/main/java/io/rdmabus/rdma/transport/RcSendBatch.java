package io.rdmabus.rdma.transport;

import io.rdmabus.rdma.verbs.SendRequestList;

/**
 * The frames an {@link RdmaPublication} committed inside a batch ({@code beginBatch}..{@code endBatch}, the bus's batch
 * offer) and has not posted yet: per frame its slot, length and the connections it goes to (each holding the credit and
 * window frame the claim took). At the end of the batch, or when it is full, the publication posts each connection's
 * frames, in commit order, as one chain of work requests with one {@code ibv_post_send} ({@link #chain}), where outside a
 * batch each commit posts once per connection. Owned by the publisher thread (the one holding the claim gate).
 */
final class RcSendBatch implements AutoCloseable {
    /** Frames in a batch at most: also the longest chain, since a connection gets each frame once. */
    static final int FRAMES = 64;

    private final int capacity;
    private final int[] slot;
    private final int[] length;
    private final Connection[][] targets;
    private final int[] targetCount;
    private final SendRequestList chain;
    /** Per request of the chain being built: the batch frame it sends. */
    private final int[] chainFrame;
    private int frames;

    /** @param slots the publication's slot ring: a batch never holds more frames than it has slots */
    RcSendBatch(final int slots) {
        this.capacity = Math.min(FRAMES, slots);
        this.slot = new int[capacity];
        this.length = new int[capacity];
        this.targets = new Connection[capacity][];
        this.targetCount = new int[capacity];
        this.chain = new SendRequestList(capacity);
        this.chainFrame = new int[capacity];
    }

    /** @return no frame waits for its post */
    boolean isEmpty() {
        return frames == 0;
    }

    /** @return the batch holds as many frames as it can: post it before the next commit */
    boolean isFull() {
        return frames == capacity;
    }

    /**
     * Adds a committed frame; takes its first {@code count} connections out of {@code from} (nulling them there).
     */
    void add(final int frameSlot, final int frameLength, final Connection[] from, final int count) {
        final int f = frames++;
        slot[f] = frameSlot;
        length[f] = frameLength;
        Connection[] to = targets[f];
        if (to == null || to.length < count) {
            to = new Connection[Math.max(count, 4)];
            targets[f] = to;
        }
        for (int i = 0; i < count; i++) {
            to[i] = from[i];
            from[i] = null;
        }
        targetCount[f] = count;
    }

    /** @return frames held */
    int frames() {
        return frames;
    }

    int slot(final int frame) {
        return slot[frame];
    }

    int length(final int frame) {
        return length[frame];
    }

    int targetCount(final int frame) {
        return targetCount[frame];
    }

    /** @return the {@code i}-th connection of {@code frame} not taken yet, or null; takes it */
    Connection takeTarget(final int frame, final int i) {
        final Connection c = targets[frame][i];
        targets[frame][i] = null;
        return c;
    }

    /** @return whether {@code frame} goes to {@code c} too (and was not taken yet); takes it */
    boolean takeTarget(final int frame, final Connection c) {
        final Connection[] to = targets[frame];
        for (int i = 0; i < targetCount[frame]; i++) {
            if (to[i] == c) {
                to[i] = null;
                return true;
            }
        }
        return false;
    }

    /** @return the reusable list one connection's chain is built in */
    SendRequestList chain() {
        return chain;
    }

    /** Records that request {@code request} of the chain sends batch frame {@code frame}. */
    void chained(final int request, final int frame) {
        chainFrame[request] = frame;
    }

    /** @return the batch frame request {@code request} of the chain sends */
    int chainedFrame(final int request) {
        return chainFrame[request];
    }

    /** Every frame was posted (or given up on): the batch is empty again. */
    void clear() {
        for (int f = 0; f < frames; f++) {
            targetCount[f] = 0;
        }
        frames = 0;
    }

    @Override
    public void close() {
        chain.close();
    }
}
