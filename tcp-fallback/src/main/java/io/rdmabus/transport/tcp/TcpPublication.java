package io.rdmabus.transport.tcp;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.Delivery;
import io.rdmabus.spi.FrameClaim;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import reactor.core.scheduler.Schedulers;

/**
 * Sending side of one topic: the claim is a DATA message claimed in the outbound ring of every connection whose peer
 * subscribed the topic ({@link ConnectionOutbound}); the bus encodes straight into the first of them, and commit copies
 * the message into the others and commits them all. No buffer or queue node is allocated per message.
 *
 * <p>RELIABLE: {@link #tryClaim} answers {@link TransportStatus#BACK_PRESSURED} while any subscribed peer's ring is
 * full or its credit for this topic is used up (the slowest subscriber of this topic paces the publisher; nothing is
 * dropped; other topics are not held up: {@link TcpProtocol}, CREDIT); the claim reserves the frame's credit at every
 * subscriber, and an aborted claim gives it back. BEST_EFFORT: never back-pressured; a frame is dropped (and counted)
 * for each peer whose ring is full or, if it subscribed the topic reliable, whose credit is used up, so that
 * subscriber sees a sequence gap. A peer whose connection closed gets nothing, in both.
 *
 * <p>Owner: one publishing thread at a time (the bus's single-writer publication).
 */
final class TcpPublication implements TransportPublication, FrameClaim {
    /** A subscriber whose connection is closed: it gets nothing. */
    private static final int GONE = -1;
    /** A subscriber without room (ring or credit). */
    private static final int FULL = -2;
    private final TcpTransport transport;
    private final TcpTransport.TopicOut out;
    private final int topicId;
    private final boolean reliable;
    private final int maxFrameLength;
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
    /** The subscribers of the pending claim, or null when there is none. */
    private RemoteSubscriber[] claimed;
    /** Per subscriber of the pending claim: the message's index in its connection's ring, {@link #GONE} or {@link #FULL}. */
    private int[] claims = new int[1];
    /** Which subscriber's ring the bus encodes into; -1: {@link #scratch}. */
    private int primary;
    private int pendingLength;
    /** Where a frame that no peer has room for is encoded before it is dropped. */
    private UnsafeBuffer scratch = new UnsafeBuffer(new byte[0]);
    private volatile boolean closed;

    TcpPublication(final TcpTransport transport, final TcpTransport.TopicOut out, final TopicDescriptor topic, final int maxFrameLength) {
        this.transport = transport;
        this.out = out;
        this.topicId = topic.topicId();
        this.reliable = topic.delivery() == Delivery.RELIABLE;
        this.maxFrameLength = maxFrameLength;
    }

    @Override
    public int tryClaim(final int frameLength) {
        if (closed || transport.isClosed()) {
            return TransportStatus.CLOSED;
        }
        if (frameLength < 0 || frameLength > maxFrameLength) {
            return TransportStatus.FRAME_TOO_LARGE;
        }
        abort(); // a claim that was neither committed nor aborted
        final RemoteSubscriber[] targets = out.subscribers;
        if (targets.length == 0) {
            return TransportStatus.NOT_CONNECTED;
        }
        final int wireLength = TcpProtocol.DATA_HEADER + frameLength;
        if (claims.length < targets.length) {
            claims = new int[targets.length];
        }
        int primary = -1;
        for (int i = 0; i < targets.length; i++) {
            final int index = claimAt(targets[i], wireLength);
            claims[i] = index;
            if (index == FULL && reliable) {
                rollBack(targets, i, wireLength);
                return TransportStatus.BACK_PRESSURED;
            }
            if (index >= 0 && primary < 0) {
                primary = i;
            }
        }
        final AtomicBuffer into;
        final int at;
        if (primary >= 0) {
            into = targets[primary].connection.outbound.buffer();
            at = claims[primary];
        } else { // every peer is gone or (best effort) full: encoded, then dropped at commit
            if (scratch.capacity() < wireLength) {
                scratch = new UnsafeBuffer(new byte[wireLength]);
            }
            into = scratch;
            at = 0;
        }
        TcpProtocol.putDataHeader(into, at, topicId, frameLength);
        view.wrap(into, at + TcpProtocol.DATA_HEADER, frameLength);
        claimed = targets;
        this.primary = primary;
        pendingLength = frameLength;
        return TransportStatus.OK;
    }

    /**
     * Takes a subscriber's credit (if it subscribed reliable) and room in its connection's ring for one message.
     *
     * @return the message's index in the connection's ring; {@link #GONE} if the connection is closed (it gets nothing, as
     *         a closed socket would); {@link #FULL} if the ring or the credit had no room
     */
    private static int claimAt(final RemoteSubscriber target, final int wireLength) {
        final PeerConnection connection = target.connection;
        if (connection.isInactive()) {
            return GONE;
        }
        if (target.reliable && !target.tryReserve(wireLength)) {
            return FULL;
        }
        final int index = connection.outbound.tryClaim(wireLength);
        if (index < 0) {
            if (target.reliable) {
                target.refund(wireLength);
            }
            return FULL;
        }
        return index;
    }

    /** Gives back the claims (and credit) taken for {@code targets[0..count)}. */
    private void rollBack(final RemoteSubscriber[] targets, final int count, final int wireLength) {
        for (int i = 0; i < count; i++) {
            if (claims[i] >= 0) {
                targets[i].connection.outbound.abort(claims[i]);
                if (targets[i].reliable) {
                    targets[i].refund(wireLength);
                }
            }
        }
    }

    @Override
    public FrameClaim claim() {
        return this;
    }

    @Override
    public MutableDirectBuffer buffer() {
        return view;
    }

    @Override
    public int offset() {
        return 0;
    }

    @Override
    public int length() {
        return pendingLength;
    }

    /** Copies the message from the ring it was encoded in to every other claimed ring, then commits them, that one last. */
    @Override
    public void commit() {
        final RemoteSubscriber[] targets = claimed;
        if (targets == null) {
            return;
        }
        claimed = null;
        final int wireLength = TcpProtocol.DATA_HEADER + pendingLength;
        final AtomicBuffer from = primary >= 0 ? targets[primary].connection.outbound.buffer() : null;
        final int fromIndex = primary >= 0 ? claims[primary] : 0;
        for (int i = 0; i < targets.length; i++) {
            final int index = claims[i];
            if (index == FULL) { // best effort only: a reliable claim was refused whole
                transport.onBestEffortDrop();
                targets[i].connection.onDrop();
            } else if (index >= 0 && i != primary) {
                final ConnectionOutbound outbound = targets[i].connection.outbound;
                outbound.buffer().putBytes(index, from, fromIndex, wireLength);
                outbound.commit(index);
            }
        }
        if (primary >= 0) {
            targets[primary].connection.outbound.commit(fromIndex);
        }
    }

    @Override
    public void abort() {
        final RemoteSubscriber[] targets = claimed;
        if (targets != null) {
            claimed = null;
            rollBack(targets, targets.length, TcpProtocol.DATA_HEADER + pendingLength);
        }
    }

    @Override
    public int maxFrameLength() {
        return maxFrameLength;
    }

    @Override
    public boolean isConnected() {
        return out.subscribers.length > 0;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        abort();
        if (!Schedulers.isInNonBlockingThread()) {
            // not on an event loop or a bus agent (a subscriber's callback there may close a publication): waiting on one
            // can wait for itself, e.g. an event loop that does not read while the peer's writes wait for it to. What was
            // committed stays queued on its connections and goes out all the same.
            lingerUntilWritten(transport.config().lingerMs());
        }
        closed = true;
        transport.onPublicationClosed(this);
    }

    /** Waits (bounded) until what this publication committed so far has been written to each peer's socket. */
    private void lingerUntilWritten(final long lingerMs) {
        final RemoteSubscriber[] targets = out.subscribers;
        final long[] marks = new long[targets.length];
        for (int i = 0; i < targets.length; i++) {
            marks[i] = targets[i].connection.outbound.claimedPosition();
        }
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(lingerMs);
        for (int i = 0; i < targets.length; i++) {
            final PeerConnection connection = targets[i].connection;
            while (!connection.isInactive() && connection.outbound.writtenPosition() < marks[i] && System.nanoTime() < deadlineNs) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
        }
    }

    /** Marks the publication closed without waiting (the transport is closing and flushes every connection itself). */
    void closeNow() {
        closed = true;
        abort();
    }
}
