package io.rdmabus.transport.aeron;

import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.logbuffer.BufferClaim;
import io.rdmabus.spi.FrameClaim;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;

import org.agrona.MutableDirectBuffer;

/**
 * One bus publication over an Aeron {@link ExclusivePublication} (single writer, its own session): a claim is
 * Aeron's {@link BufferClaim} over the term buffer, so the bus encodes straight into the log. Each bus frame is one
 * unfragmented Aeron message, at most {@link Publication#maxPayloadLength()} bytes.
 */
final class AeronPublication implements TransportPublication, FrameClaim {
    private final AeronTransport transport;
    private final ExclusivePublication publication;
    private final BufferClaim bufferClaim = new BufferClaim();
    private final int maxFrameLength;
    private int claimedLength;
    /** The {@link AeronCounter.Source#PUBLICATIONS} counters; written by the claiming thread, read by {@code counters()}. */
    final java.util.concurrent.atomic.AtomicLongArray counts = AeronCounter.newValues();
    private volatile boolean closed;

    AeronPublication(final AeronTransport transport, final ExclusivePublication publication) {
        this.transport = transport;
        this.publication = publication;
        this.maxFrameLength = publication.maxPayloadLength();
    }

    @Override
    public int tryClaim(final int frameLength) {
        if (closed) {
            return TransportStatus.CLOSED;
        }
        if (frameLength < 0 || frameLength > maxFrameLength) {
            return TransportStatus.FRAME_TOO_LARGE;
        }
        final long result = publication.tryClaim(frameLength, bufferClaim);
        if (result > 0) {
            claimedLength = frameLength;
            return TransportStatus.OK;
        }
        if (result == Publication.BACK_PRESSURED) {
            AeronCounter.CLAIMS_BACK_PRESSURED.add(counts, 1);
        } else if (result == Publication.NOT_CONNECTED) {
            AeronCounter.CLAIMS_NOT_CONNECTED.add(counts, 1);
        } else if (result == Publication.ADMIN_ACTION) {
            AeronCounter.CLAIMS_ADMIN_ACTION.add(counts, 1);
        }
        return map(result);
    }

    /**
     * @param aeronResult a negative {@link Publication} offer/claim result
     * @return the matching {@link TransportStatus}
     */
    static int map(final long aeronResult) {
        if (aeronResult == Publication.NOT_CONNECTED) {
            return TransportStatus.NOT_CONNECTED;
        }
        if (aeronResult == Publication.BACK_PRESSURED) {
            return TransportStatus.BACK_PRESSURED;
        }
        if (aeronResult == Publication.ADMIN_ACTION) {
            return TransportStatus.ADMIN_ACTION;
        }
        // CLOSED, and MAX_POSITION_EXCEEDED: the log is exhausted, this publication can never send again.
        return TransportStatus.CLOSED;
    }

    @Override
    public FrameClaim claim() {
        return this;
    }

    @Override
    public MutableDirectBuffer buffer() {
        return bufferClaim.buffer();
    }

    @Override
    public int offset() {
        return bufferClaim.offset();
    }

    @Override
    public int length() {
        return claimedLength;
    }

    @Override
    public void commit() {
        bufferClaim.commit();
        AeronCounter.FRAMES_SENT.add(counts, 1);
        AeronCounter.BYTES_SENT.add(counts, claimedLength);
    }

    @Override
    public void abort() {
        bufferClaim.abort();
    }

    @Override
    public int maxFrameLength() {
        return maxFrameLength;
    }

    @Override
    public boolean isConnected() {
        return !closed && publication.isConnected();
    }

    ExclusivePublication aeronPublication() {
        return publication;
    }

    boolean isClosed() {
        return closed;
    }

    /** Closes the Aeron publication; the media driver lingers it so committed frames still go out. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        transport.onPublicationClosed(this);
    }
}
