package io.rdmabus.transport.tcp;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rdmabus.Delivery;
import io.rdmabus.spi.FrameClaim;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import reactor.core.scheduler.Schedulers;

/**
 * Sending side of one topic: the claim is a pooled Netty buffer with room for the wire header, so the bus encodes
 * straight into the bytes that go to the socket; commit queues it (a retained duplicate per peer) on every
 * connection whose peer subscribed the topic.
 *
 * <p>RELIABLE: {@link #tryClaim} answers {@link TransportStatus#BACK_PRESSURED} while any subscribed peer's queue is
 * full or its credit for this topic is used up (the slowest subscriber of this topic paces the publisher; nothing is
 * dropped; other topics are not held up: {@link TcpProtocol}, CREDIT); the claim reserves the frame's credit at every
 * subscriber, and an aborted claim gives it back. BEST_EFFORT: never back-pressured; a frame is dropped (and counted)
 * for each peer whose queue is full or, if it subscribed the topic reliable, whose credit is used up, so that
 * subscriber sees a sequence gap.
 *
 * <p>Owner: one publishing thread at a time (the bus's single-writer publication).
 */
final class TcpPublication implements TransportPublication, FrameClaim {
    private final TcpTransport transport;
    private final TcpTransport.TopicOut out;
    private final int topicId;
    private final boolean reliable;
    private final int maxFrameLength;
    private final long outboundLimitBytes;
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
    private ByteBuf pending;
    private int pendingLength;
    /** RELIABLE: the subscribers whose credit the pending claim reserved. */
    private RemoteSubscriber[] reserved;
    private volatile boolean closed;

    TcpPublication(final TcpTransport transport, final TcpTransport.TopicOut out, final TopicDescriptor topic, final int maxFrameLength) {
        this.transport = transport;
        this.out = out;
        this.topicId = topic.topicId();
        this.reliable = topic.delivery() == Delivery.RELIABLE;
        this.maxFrameLength = maxFrameLength;
        this.outboundLimitBytes = transport.config().outboundBufferBytes();
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
        if (reliable && !reserve(targets, wireLength)) {
            return TransportStatus.BACK_PRESSURED;
        }
        final ByteBuf buf = ByteBufAllocator.DEFAULT.directBuffer(wireLength, wireLength);
        buf.writeIntLE(1 + 4 + frameLength).writeByte(TcpProtocol.TYPE_DATA).writeIntLE(topicId);
        if (buf.hasMemoryAddress()) {
            view.wrap(buf.memoryAddress() + TcpProtocol.DATA_HEADER, frameLength);
        } else {
            final ByteBuffer nio = buf.internalNioBuffer(TcpProtocol.DATA_HEADER, frameLength);
            view.wrap(nio, nio.position(), frameLength);
        }
        pending = buf;
        pendingLength = frameLength;
        return TransportStatus.OK;
    }

    /** @return true if every subscriber had queue room and (if it subscribed reliable) credit, now reserved */
    private boolean reserve(final RemoteSubscriber[] targets, final int wireLength) {
        for (final RemoteSubscriber target : targets) {
            if (target.connection.queuedBytes() + wireLength > outboundLimitBytes) {
                return false;
            }
        }
        for (int i = 0; i < targets.length; i++) {
            if (targets[i].reliable && !targets[i].tryReserve(wireLength)) {
                for (int j = 0; j < i; j++) {
                    if (targets[j].reliable) {
                        targets[j].refund(wireLength);
                    }
                }
                return false;
            }
        }
        reserved = targets;
        return true;
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

    @Override
    public void commit() {
        final ByteBuf buf = pending;
        if (buf == null) {
            return;
        }
        pending = null;
        final int wireLength = TcpProtocol.DATA_HEADER + pendingLength;
        buf.writerIndex(wireLength);
        if (reliable) {
            final RemoteSubscriber[] targets = reserved;
            reserved = null;
            final int last = targets.length - 1; // tryClaim reserved for at least one subscriber
            for (int i = 0; i < last; i++) {
                targets[i].connection.send(buf.retainedDuplicate());
            }
            targets[last].connection.send(buf); // the last takes the buffer itself: one duplicate and its count fewer
            return;
        }
        for (final RemoteSubscriber target : out.subscribers) {
            if (target.connection.queuedBytes() + wireLength > outboundLimitBytes || target.reliable && !target.tryReserve(wireLength)) {
                transport.onBestEffortDrop();
                target.connection.onDrop();
                continue;
            }
            target.connection.send(buf.retainedDuplicate());
        }
        buf.release();
    }

    @Override
    public void abort() {
        final ByteBuf buf = pending;
        if (buf != null) {
            pending = null;
            final RemoteSubscriber[] targets = reserved;
            if (targets != null) {
                reserved = null;
                final int wireLength = TcpProtocol.DATA_HEADER + pendingLength;
                for (final RemoteSubscriber target : targets) {
                    if (target.reliable) {
                        target.refund(wireLength);
                    }
                }
            }
            buf.release();
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
            marks[i] = targets[i].connection.enqueuedCount();
        }
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(lingerMs);
        for (int i = 0; i < targets.length; i++) {
            final PeerConnection connection = targets[i].connection;
            while (!connection.isInactive() && connection.writtenCount() < marks[i] && System.nanoTime() < deadlineNs) {
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
