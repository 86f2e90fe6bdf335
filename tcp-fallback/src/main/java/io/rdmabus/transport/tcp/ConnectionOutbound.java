package io.rdmabus.transport.tcp;

import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;

import org.agrona.BitUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.ControlledMessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * What one connection sends: DATA messages in a many-to-one byte ring, control messages in a queue; both drained on
 * the connection's event loop, in batches, one flush per drain.
 *
 * <p>DATA: a publication claims a record of a whole wire message ({@link TcpProtocol}, length prefix included) in the
 * ring, the bus encodes the frame into it in place, and the publication commits it (or aborts it). The event loop
 * copies the committed records, in ring order, into pooled buffers of up to {@link #BATCH_BYTES} and writes each
 * buffer once: no buffer, reference count or queue node per message, one pipeline write per batch. The ring holds
 * {@link #capacityFor} bytes: {@link TcpTransportConfig#outboundBufferBytes()} rounded up to a power of two and to at
 * least eight of the largest messages (the ring's largest record is an eighth of it). A full ring is a reliable
 * publication's back-pressure and a best-effort frame's drop.
 *
 * <p>Control messages (HELLO, AUTH, SUBSCRIBE, UNSUBSCRIBE, CREDIT: a few per connection or per reliable batch) are
 * buffers queued from any thread and written before the DATA of the same drain; no control message depends on the
 * order of DATA.
 *
 * <p>Neither is drained while Netty's channel is unwritable, so a peer that stops reading back-pressures the ring.
 *
 * <p>Threads: {@link #tryClaim}, {@link #commit}, {@link #abort}, {@link #send}, {@link #close} and the position and
 * size reads from any thread; {@link #drain} on the event loop. A drain is scheduled by whichever thread finds none
 * scheduled after its commit (a Dekker pair with the drain's clearing of the flag before it reads: each side fences
 * between its store and its load, so a record committed while a drain was ending is seen by that drain or wakes the
 * next).
 */
final class ConnectionOutbound {
    /** The ring's record type for a DATA message (the ring itself uses negative types for padding). */
    static final int RECORD_DATA = 1;
    /** Bytes copied out of the ring into one buffer before it is written. */
    static final int BATCH_BYTES = 64 * 1024;
    private static final int NO_ROOM = -1;

    private final ManyToOneRingBuffer ring;
    /** The ring's memory as a Netty buffer, to copy records out of (read by the event loop only). */
    private final ByteBuf ringBytes;
    private final ConcurrentLinkedQueue<ByteBuf> control = new ConcurrentLinkedQueue<>();
    private final AtomicLong controlBytes = new AtomicLong();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final Runnable drainTask = () -> drain(false);
    private final ControlledMessageHandler copyOut = this::copyOut;
    /** The ring's consumer position when the last flush completed: DATA bytes handed to the socket. */
    private volatile long writtenPosition;
    private volatile boolean closed;

    private ChannelHandlerContext ctx; // set once, before the channel is active
    private final Sent sent;

    // ---- event loop only
    private ByteBuf batch;
    private int batchMessages;
    private long batchFrameBytes;

    /** Counts the DATA messages handed to the socket (called on the event loop, once per batch). */
    @FunctionalInterface
    interface Sent {
        void sent(int messages, long frameBytes);
    }

    /**
     * @param sent          counts what goes out
     * @param ringCapacity  from {@link #capacityFor}
     */
    ConnectionOutbound(final Sent sent, final int ringCapacity) {
        this.sent = sent;
        final ByteBuffer memory = ByteBuffer.allocateDirect(ringCapacity + RingBufferDescriptor.TRAILER_LENGTH);
        this.ring = new ManyToOneRingBuffer(new UnsafeBuffer(memory));
        this.ringBytes = Unpooled.wrappedBuffer(memory);
    }

    /**
     * @param outboundBufferBytes {@link TcpTransportConfig#outboundBufferBytes()}
     * @param maxFrameBytes       {@link TcpTransportConfig#maxFrameBytes()}
     * @return the ring's capacity: a power of two, at least {@code outboundBufferBytes} and eight of the largest records
     */
    static int capacityFor(final long outboundBufferBytes, final int maxFrameBytes) {
        final long largestRecord = BitUtil.align(RecordDescriptor.HEADER_LENGTH + TcpProtocol.DATA_HEADER + (long) maxFrameBytes,
            RecordDescriptor.ALIGNMENT);
        final long wanted = Math.max(outboundBufferBytes, 8 * largestRecord);
        if (wanted > 1 << 30) {
            throw new IllegalArgumentException("an outbound ring of " + wanted + " bytes is over 1 GiB");
        }
        return BitUtil.findNextPositivePowerOfTwo((int) wanted);
    }

    void attach(final ChannelHandlerContext context) {
        this.ctx = context;
    }

    // ------------------------------------------------------------------ any thread

    /**
     * Claims room for one DATA message in the ring; the caller writes it whole (from {@link #buffer()} at the returned
     * index) and then commits or aborts it.
     *
     * @param wireLength the message's length on the wire, length prefix included
     * @return the index of the message in {@link #buffer()}, or a negative value if the ring is full or the connection
     *         closed
     */
    int tryClaim(final int wireLength) {
        return closed ? NO_ROOM : ring.tryClaim(RECORD_DATA, wireLength);
    }

    /** @return the ring's memory, where claimed messages are written */
    AtomicBuffer buffer() {
        return ring.buffer();
    }

    /** Makes a claimed message visible to the event loop and makes sure a drain follows. */
    void commit(final int index) {
        ring.commit(index);
        wake();
    }

    /** Gives up a claimed message (the event loop skips it) and makes sure a drain follows: later records waited for it. */
    void abort(final int index) {
        ring.abort(index);
        wake();
    }

    /** Queues a control message; takes ownership of {@code message}. */
    void send(final ByteBuf message) {
        if (closed) {
            message.release();
            return;
        }
        controlBytes.addAndGet(message.readableBytes());
        control.offer(message);
        if (closed) {
            releaseControl(); // raced with close(): nobody will drain
            return;
        }
        wake();
    }

    private void wake() {
        VarHandle.fullFence(); // the record (or queued message) before the flag: pairs with drain's clear-then-read
        if (!drainScheduled.get() && drainScheduled.compareAndSet(false, true)) {
            try {
                ctx.executor().execute(drainTask);
            } catch (final RejectedExecutionException ex) {
                close();
            }
        }
    }

    /** @return bytes queued and not yet handed to the socket (DATA records claimed or committed, and control messages) */
    long queuedBytes() {
        return ring.size() + controlBytes.get();
    }

    /** The connection is gone: what is queued is dropped, and nothing more is taken. */
    void close() {
        closed = true;
        releaseControl();
    }

    /** @return the ring position after every DATA message claimed so far */
    long claimedPosition() {
        return ring.producerPosition();
    }

    /** @return the ring position up to which DATA messages were handed to the socket and flushed */
    long writtenPosition() {
        return writtenPosition;
    }

    // ------------------------------------------------------------------ event loop

    /**
     * Writes what is queued, control messages first, in batches with one flush, while the channel is writable.
     *
     * @param ignoreWritability write everything (the connection is closing gracefully)
     */
    void drain(final boolean ignoreWritability) {
        drainScheduled.set(false); // a volatile store: ordered before the reads below (see wake)
        if (closed || !ctx.channel().isActive()) {
            releaseControl();
            ring.read((type, buffer, index, length) -> { }, Integer.MAX_VALUE); // dropped: frees the ring for publishers still claiming
            return;
        }
        final long start = ring.consumerPosition();
        int writes = 0;
        ByteBuf message;
        while ((ignoreWritability || ctx.channel().isWritable()) && (message = control.poll()) != null) {
            controlBytes.addAndGet(-message.readableBytes());
            ctx.write(message, ctx.voidPromise());
            writes++;
        }
        while (ignoreWritability || ctx.channel().isWritable()) {
            final long before = ring.consumerPosition();
            ring.controlledRead(copyOut);
            final ByteBuf full = batch;
            if (full == null) {
                if (ring.consumerPosition() == before) {
                    break; // nothing committed (padding at the ring's end, skipped, moves the position and goes round again)
                }
                continue;
            }
            batch = null;
            sent.sent(batchMessages, batchFrameBytes);
            batchMessages = 0;
            batchFrameBytes = 0;
            ctx.write(full, ctx.voidPromise());
            writes++;
        }
        final long mark = ring.consumerPosition();
        if (writes > 0 || mark != start) {
            // also when the drain only skipped padding (an aborted claim, the ring's end): the position moves past it
            // once what was written before it is flushed, so a waiter for a position at or after it is not left waiting.
            // The larger mark wins: these listeners have run out of order (an earlier drain's after a later one's, seen in
            // the TCK; a drain also runs from channelWritabilityChanged, which Netty fires in the middle of a flush), and
            // a later mark's completion means every byte before it was written.
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(future -> {
                if (mark > writtenPosition) {
                    writtenPosition = mark; // event loop only: no other writer
                }
            });
        }
    }

    /** Copies one DATA record into the batch, or leaves it in the ring when the batch is full (it goes in the next). */
    private ControlledMessageHandler.Action copyOut(final int type, final MutableDirectBuffer buffer, final int index, final int length) {
        ByteBuf into = batch;
        if (into == null) {
            into = ctx.alloc().directBuffer(Math.max(length, Math.min(BATCH_BYTES, ring.size())));
            batch = into;
        } else if (into.writableBytes() < length) {
            return ControlledMessageHandler.Action.ABORT;
        }
        into.writeBytes(ringBytes, index, length);
        batchMessages++;
        batchFrameBytes += length - TcpProtocol.DATA_HEADER;
        return ControlledMessageHandler.Action.CONTINUE;
    }

    private void releaseControl() {
        ByteBuf message;
        while ((message = control.poll()) != null) {
            controlBytes.addAndGet(-message.readableBytes());
            message.release();
        }
    }
}
