package io.rdmabus.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;

import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The outbound ring of one connection, on Netty's embedded channel (its event loop is this thread: a drain runs when
 * the test runs the channel's pending tasks). The socket side is covered by the TCK over real TCP.
 */
class ConnectionOutboundTest {
    private static final int TOPIC = 42;

    private long countedMessages;
    private long countedBytes;
    private final ConnectionOutbound outbound = new ConnectionOutbound((messages, frameBytes) -> {
        countedMessages += messages;
        countedBytes += frameBytes;
    }, ConnectionOutbound.capacityFor(4096, 256));
    private final EmbeddedChannel channel = new EmbeddedChannel(new ChannelInboundHandlerAdapter() {
        @Override
        public void handlerAdded(final ChannelHandlerContext context) {
            outbound.attach(context);
        }

        @Override
        public void channelWritabilityChanged(final ChannelHandlerContext context) {
            if (context.channel().isWritable()) {
                outbound.drain(false);
            }
            context.fireChannelWritabilityChanged();
        }
    });
    /** Sequence numbers of the DATA messages written to the channel so far, in order. */
    private final List<Integer> written = new ArrayList<>();

    @AfterEach
    void close() {
        channel.finishAndReleaseAll();
    }

    @Test
    void theRingHoldsTheConfiguredBytesAndAtLeastEightOfTheLargestMessages() {
        assertEquals(1 << 20, ConnectionOutbound.capacityFor(1 << 20, 64 * 1024), "the defaults: 1 MiB");
        assertEquals(1 << 20, ConnectionOutbound.capacityFor(2 * 64 * 1024, 64 * 1024), "eight 64 KiB frames with their headers");
        assertEquals(4 << 20, ConnectionOutbound.capacityFor(3 << 20, 1024), "rounded up to a power of two");
        assertEquals(256 << 20, ConnectionOutbound.capacityFor(32 << 20, 16 << 20), "eight of the largest frames");
    }

    @Test
    void everyCommittedMessageGoesOutOnceAndInOrderWhileTheRingWrapsManyTimes() {
        long frameBytes = 0;
        for (int seq = 0; seq < 2000; seq++) {
            final int frameLength = 4 + seq % 250;
            while (offer(seq, frameLength) < 0) {
                channel.runPendingTasks(); // full: the event loop drains
                collect();
            }
            frameBytes += frameLength;
            if (seq % 7 == 0) {
                channel.runPendingTasks();
                collect();
            }
        }
        channel.runPendingTasks();
        collect();
        assertEquals(2000, written.size());
        for (int seq = 0; seq < 2000; seq++) {
            assertEquals(seq, written.get(seq), "in claim order, none twice, none missing");
        }
        assertEquals(2000, countedMessages);
        assertEquals(frameBytes, countedBytes);
        assertEquals(0, outbound.queuedBytes());
        assertEquals(outbound.claimedPosition(), outbound.writtenPosition(), "flushed up to the last claim");
    }

    @Test
    void aFullRingRefusesAClaimAndTakesMoreOnceDrained() {
        int accepted = 0;
        while (offer(accepted, 200) >= 0) {
            accepted++;
        }
        assertTrue(accepted >= 8 && accepted * 224 <= 4096, accepted + " messages of 224 ring bytes in a 4 KiB ring");
        assertTrue(outbound.queuedBytes() > 4096 - 224, "full: " + outbound.queuedBytes());
        channel.runPendingTasks();
        collect();
        assertEquals(accepted, written.size());
        assertTrue(offer(accepted, 200) >= 0, "room again");
    }

    @Test
    void anUncommittedClaimHoldsBackLaterMessagesUntilItIsAbortedAndThenIsSkipped() {
        offer(0, 16);
        final int held = outbound.tryClaim(TcpProtocol.DATA_HEADER + 16);
        offer(2, 16);
        channel.runPendingTasks();
        collect();
        assertEquals(List.of(0), written, "the later message waits for the claim before it");
        outbound.abort(held);
        channel.runPendingTasks(); // the abort scheduled a drain
        collect();
        assertEquals(List.of(0, 2), written);
    }

    @Test
    void theWrittenPositionPassesAnAbortedClaim() {
        offer(0, 16);
        channel.runPendingTasks();
        collect();
        assertEquals(outbound.claimedPosition(), outbound.writtenPosition(), "the message is flushed");
        final int aborted = outbound.tryClaim(TcpProtocol.DATA_HEADER + 16);
        outbound.abort(aborted);
        final long afterAbort = outbound.claimedPosition();
        channel.runPendingTasks(); // the abort's drain finds padding only
        assertEquals(afterAbort, outbound.writtenPosition(), "a closing publication waits for this position");
        offer(1, 16);
        channel.runPendingTasks();
        collect();
        assertEquals(List.of(0, 1), written);
        assertEquals(outbound.claimedPosition(), outbound.writtenPosition());
    }

    @Test
    void controlMessagesQueuedWithDataGoFirstAndNothingIsTakenOnceClosed() {
        offer(0, 16);
        outbound.send(Unpooled.buffer().writeIntLE(5).writeByte(TcpProtocol.TYPE_UNSUBSCRIBE).writeIntLE(TOPIC));
        channel.runPendingTasks();
        final ByteBuf first = nextWritten();
        assertEquals(TcpProtocol.TYPE_UNSUBSCRIBE, first.getUnsignedByte(first.readerIndex() + TcpProtocol.LENGTH_FIELD));
        first.release();
        collect();
        assertEquals(List.of(0), written);

        outbound.close();
        assertTrue(outbound.tryClaim(64) < 0, "no claim on a closed connection");
        final ByteBuf late = Unpooled.buffer().writeIntLE(1);
        outbound.send(late);
        assertEquals(0, late.refCnt(), "a control message sent after close is released");
    }

    /** Claims, writes and commits one DATA message whose frame starts with {@code seq} and is filled with its low byte. */
    private int offer(final int seq, final int frameLength) {
        final int index = outbound.tryClaim(TcpProtocol.DATA_HEADER + frameLength);
        if (index < 0) {
            return index;
        }
        final AtomicBuffer buffer = outbound.buffer();
        TcpProtocol.putDataHeader(buffer, index, TOPIC, frameLength);
        buffer.putInt(index + TcpProtocol.DATA_HEADER, seq, ByteOrder.LITTLE_ENDIAN);
        buffer.setMemory(index + TcpProtocol.DATA_HEADER + 4, frameLength - 4, (byte) seq);
        outbound.commit(index);
        return index;
    }

    private ByteBuf nextWritten() {
        ByteBuf next;
        while ((next = channel.readOutbound()) != null && !next.isReadable()) {
            next.release(); // the flush's empty buffer
        }
        return next;
    }

    /** Parses the DATA messages written since the last call (batches hold whole messages) into {@link #written}. */
    private void collect() {
        ByteBuf batch;
        while ((batch = nextWritten()) != null) {
            try {
                while (batch.isReadable()) {
                    final int length = batch.readIntLE();
                    assertEquals(TcpProtocol.TYPE_DATA, batch.readUnsignedByte());
                    assertEquals(TOPIC, batch.readIntLE());
                    final int seq = batch.readIntLE();
                    for (int i = 0; i < length - 1 - 4 - 4; i++) {
                        assertEquals((byte) seq, batch.readByte(), "message " + seq + " byte " + i);
                    }
                    written.add(seq);
                }
            } finally {
                batch.release();
            }
        }
    }
}
