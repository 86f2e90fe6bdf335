package io.rdmabus.core;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Topic;
import io.rdmabus.codec.Codec;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.FrameClaim;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;

import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.EpochNanoClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Encodes in place into the transport's claimed buffer; fragments reliable messages larger than one frame.
 *
 * @param <T> value type
 */
final class DefaultPublication<T> implements BusPublication<T> {
    private static final Logger LOG = LoggerFactory.getLogger(DefaultPublication.class);
    private static final long CLOSE_LINGER_NS = 5_000_000_000L;
    /** How long a {@link #close()} from another thread waits for an offer in progress before it leaves the closing to it. */
    private static final long CLOSE_WAIT_NS = 1_000_000_000L;
    /** For {@link #doOffer}: the offer reads the clock itself (a batch offer's frames, once per batch). */
    private static final long STAMP_INSIDE = Long.MIN_VALUE;
    private static final int IDLE = 0;
    private static final int BUSY = 1;
    private static final int CLOSED = 2;

    private final Topic<T> topic;
    private final Codec<T> codec;
    private final TransportPublication transportPublication;
    private final int sessionId;
    private final int maxPayload;
    /** The frames' stamp (epoch ns), or null when the topic leaves it out ({@link Topic#withoutTimestamps()}: stamps are 0). */
    private final EpochNanoClock clock;
    private final DefaultBus bus;
    /** Same-bus loopback when the transport does not loop back, else null. */
    private final LocalDelivery local;
    /** The topic's last-value cache of this publication, or null; with its key function. */
    private final LastValueCache lastValues;
    private final java.util.function.ToLongFunction<? super T> lastValueKey;
    private long nextSequence;
    /** True from the start to the end of a batch offer. Owner: the thread holding the ownership token. */
    private boolean inBatch;
    /** The stamp the frames of the batch offer in progress share, read at its first taken frame; 0 before. Owner: as above. */
    private long batchStampNs;
    /**
     * Ownership token: whoever moves it IDLE -> BUSY (a CAS) may touch the single-writer transport publication. The
     * owner lets it go with a release store, not a volatile one: the next CAS then waits for this offer's stores
     * (into the transport's buffer, whose cache lines a receiving thread reads) while the next offer's clock read runs,
     * instead of the owner waiting for them at the end of this one. A close from another thread therefore cannot
     * rely on seeing IDLE at once, and retries ({@link #close()}).
     */
    private final AtomicInteger state = new AtomicInteger(IDLE);
    /**
     * The thread holding the token, between its CAS and its release, else null; written by that thread only (plain
     * stores). A thread reads its own last write or a later one, so only the holder ever finds itself here: that is how
     * {@link #close()} knows it is called from inside its own offer (a codec's encode).
     */
    private Thread holder;
    private volatile boolean closeRequested;
    /** Messages and their encoded bytes, written by the token owner only (ordered stores, no atomic read-modify-write). */
    private final AtomicLong messages = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    /** This publication's counters in the bus's counters file, or null; set by the bus before the publication is shared. */
    io.rdmabus.counters.BusCounters.Scope countersScope;

    private ExpandableDirectByteBuffer scratch;
    private int pendingLength;
    private int pendingOffset;
    private long pendingTimestampNs;

    DefaultPublication(final DefaultBus bus, final Topic<T> topic, final TransportPublication transportPublication, final int sessionId,
                       final LocalDelivery local) {
        this.bus = bus;
        this.local = local;
        this.lastValueKey = topic.lastValueKey();
        this.lastValues = lastValueKey == null ? null : new LastValueCache(topic, sessionId);
        this.topic = topic;
        this.codec = topic.codec();
        this.clock = topic.timestamps() ? new PublisherClock() : null;
        this.transportPublication = transportPublication;
        this.sessionId = sessionId;
        this.maxPayload = transportPublication.maxFrameLength() - FrameHeader.LENGTH;
    }

    @Override
    public int offer(final T value) {
        // the clock before the token: the read (25-40 ns here) runs while the token's CAS waits for the previous offer's
        // stores; a refused offer pays it too (docs/benchmarks.md, "What a frame's timestamp costs")
        final long timestampNs = clock == null ? 0 : clock.nanoTime();
        if (!acquire()) {
            return PublishStatus.CLOSED;
        }
        try {
            return offerOwned(value, timestampNs);
        } finally {
            release();
        }
    }

    /** As {@link BusPublication#offer(Object[], int, int)}: one take of the ownership token for the whole range. */
    @Override
    public int offer(final T[] values, final int offset, final int length) {
        java.util.Objects.checkFromIndexSize(offset, length, values.length);
        if (length == 0) {
            return 0;
        }
        if (!acquire()) {
            return PublishStatus.CLOSED;
        }
        try {
            inBatch = true;
            transportPublication.beginBatch();
            try {
                for (int i = 0; i < length; i++) {
                    final int status = offerOwned(values[offset + i], STAMP_INSIDE);
                    if (status != PublishStatus.OK) {
                        return i == 0 ? status : i;
                    }
                }
                return length;
            } finally {
                inBatch = false;
                batchStampNs = 0;
                transportPublication.endBatch(); // the transport sends what it held for the batch
            }
        } finally {
            release();
        }
    }

    @Override
    public int flush() {
        if (!acquire()) {
            return PublishStatus.CLOSED;
        }
        try {
            return doFlush();
        } finally {
            release();
        }
    }

    /**
     * With the token held: CLOSED once a close was asked for or the bus closed, else the offer's status.
     *
     * @param timestampNs the frames' stamp, read before the token was taken, or {@link #STAMP_INSIDE}
     */
    private int offerOwned(final T value, final long timestampNs) {
        return closeRequested || bus.isClosed() ? PublishStatus.CLOSED : doOffer(value, timestampNs);
    }

    private boolean acquire() {
        if (state.compareAndSet(IDLE, BUSY)) {
            holder = Thread.currentThread();
            return true;
        }
        if (state.get() == BUSY && !closeRequested) {
            throw new IllegalStateException("BusPublication for '" + topic.name() + "' used by two threads at once; "
                + "it is single-writer: give each thread its own publication");
        }
        return false;
    }

    private void release() {
        holder = null;
        if (closeRequested) {
            closeNow();
            return;
        }
        state.lazySet(IDLE);
        // a close() that gave up waiting for this offer left the closing to it; one that did not takes the token itself
        if (closeRequested && state.compareAndSet(IDLE, BUSY)) {
            closeNow();
        }
    }

    private int doOffer(final T value, final long presetStampNs) {
        if (pendingOffset < pendingLength) {
            final int status = doFlush(); // OK, BACK_PRESSURED or CLOSED
            if (status != PublishStatus.OK) {
                return status;
            }
        }
        final int length = codec.encodedLength(value);
        if (length < 0 || length > topic.maxMessageLength()) {
            return PublishStatus.MESSAGE_TOO_LARGE;
        }
        if (length > maxPayload && topic.delivery() == Delivery.BEST_EFFORT) {
            return PublishStatus.MESSAGE_TOO_LARGE;
        }
        final long key = lastValues == null ? 0 : lastValueKey.applyAsLong(value);
        final int status = transportPublication.tryClaim(FrameHeader.LENGTH + Math.min(length, maxPayload));
        if (status != TransportStatus.OK) {
            if (status == TransportStatus.NOT_CONNECTED && local != null && local.hasSubscribers()) {
                return offerLocalOnly(value, key, length, stamp(presetStampNs));
            }
            return map(status);
        }
        final long timestampNs = stamp(presetStampNs);
        final FrameClaim claim = transportPublication.claim();
        if (local != null && local.reserve() != PublishStatus.OK) {
            claim.abort();
            return PublishStatus.BACK_PRESSURED; // a same-bus RELIABLE subscriber's ring is full
        }
        if (length <= maxPayload) {
            FrameHeader.write(claim.buffer(), claim.offset(), FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + length,
                topic.topicId(), sessionId, nextSequence, timestampNs);
            try {
                codec.encode(value, claim.buffer(), claim.offset() + FrameHeader.LENGTH);
            } catch (final RuntimeException ex) {
                claim.abort();
                cancelLocal();
                throw ex;
            }
            if (local != null) {
                local.publish(claim.buffer(), claim.offset() + FrameHeader.LENGTH, length, sessionId, nextSequence, timestampNs);
            }
            if (lastValues != null) {
                lastValues.update(key, claim.buffer(), claim.offset() + FrameHeader.LENGTH, length, nextSequence, timestampNs, nextSequence);
            }
            claim.commit();
            nextSequence++;
            onMessage(length);
            return PublishStatus.OK;
        }
        try {
            encodeToScratch(value, length);
        } catch (final RuntimeException ex) {
            claim.abort();
            cancelLocal();
            throw ex;
        }
        if (local != null) {
            local.publish(scratch, 0, length, sessionId, nextSequence, timestampNs);
        }
        if (lastValues != null) {
            lastValues.update(key, scratch, 0, length, nextSequence, timestampNs, nextSequence + framesOf(length) - 1);
        }
        pendingLength = length;
        pendingOffset = 0;
        pendingTimestampNs = timestampNs;
        writeFragment(claim);
        onMessage(length);
        doFlush();
        return PublishStatus.OK;
    }

    /**
     * No subscriber beyond this bus (the transport answered NOT_CONNECTED) but one in it: the message goes to the bus's
     * own subscriptions only, and takes the sequences its frames would have taken, so a subscriber elsewhere that joins
     * later sees the session's sequences from where they are.
     */
    private int offerLocalOnly(final T value, final long key, final int length, final long timestampNs) {
        if (local.reserve() != PublishStatus.OK) {
            return PublishStatus.BACK_PRESSURED;
        }
        try {
            encodeToScratch(value, length);
        } catch (final RuntimeException ex) {
            cancelLocal();
            throw ex;
        }
        local.publish(scratch, 0, length, sessionId, nextSequence, timestampNs);
        if (lastValues != null) {
            lastValues.update(key, scratch, 0, length, nextSequence, timestampNs, nextSequence + framesOf(length) - 1);
        }
        nextSequence += framesOf(length);
        onMessage(length);
        return PublishStatus.OK;
    }

    /**
     * The frame's stamp: a single offer's, read before it took the token, or a batch offer's, read at its first taken frame
     * (once the transport had room for it) and shared by the batch's frames.
     */
    private long stamp(final long presetStampNs) {
        if (presetStampNs != STAMP_INSIDE) {
            return presetStampNs;
        }
        if (clock == null) {
            return 0;
        }
        if (batchStampNs != 0) {
            return batchStampNs;
        }
        final long now = clock.nanoTime();
        if (inBatch) {
            batchStampNs = now;
        }
        return now;
    }

    private void encodeToScratch(final T value, final int length) {
        if (scratch == null) {
            scratch = new ExpandableDirectByteBuffer(length);
        }
        scratch.checkLimit(length);
        codec.encode(value, scratch, 0);
    }

    private void cancelLocal() {
        if (local != null) {
            local.cancel();
        }
    }

    private int framesOf(final int length) {
        return length <= maxPayload ? 1 : (length + maxPayload - 1) / maxPayload;
    }

    private void onMessage(final int length) {
        messages.lazySet(messages.get() + 1);
        bytes.lazySet(bytes.get() + length);
    }

    private int doFlush() {
        while (pendingOffset < pendingLength) {
            final int status = sendFragment();
            if (status == TransportStatus.NOT_CONNECTED && local != null && local.hasSubscribers()) {
                // every subscriber beyond this bus left mid-message; the bus's own already have the whole message
                nextSequence += framesOf(pendingLength - pendingOffset);
                break;
            }
            if (status != TransportStatus.OK) {
                return status == TransportStatus.CLOSED ? PublishStatus.CLOSED : PublishStatus.BACK_PRESSURED;
            }
        }
        pendingLength = 0;
        pendingOffset = 0;
        return PublishStatus.OK;
    }

    private int sendFragment() {
        final int chunk = Math.min(maxPayload, pendingLength - pendingOffset);
        final int status = transportPublication.tryClaim(FrameHeader.LENGTH + chunk);
        if (status != TransportStatus.OK) {
            return status;
        }
        writeFragment(transportPublication.claim());
        return TransportStatus.OK;
    }

    /** Writes and commits the next fragment of the pending message into {@code claim}, claimed for exactly that fragment. */
    private void writeFragment(final FrameClaim claim) {
        final int chunk = Math.min(maxPayload, pendingLength - pendingOffset);
        final int flags = (pendingOffset == 0 ? FrameHeader.FLAG_BEGIN : 0)
            | (pendingOffset + chunk == pendingLength ? FrameHeader.FLAG_END : 0);
        FrameHeader.write(claim.buffer(), claim.offset(), flags, FrameHeader.LENGTH + chunk, topic.topicId(), sessionId, nextSequence,
            pendingTimestampNs);
        claim.buffer().putBytes(claim.offset() + FrameHeader.LENGTH, scratch, pendingOffset, chunk);
        claim.commit();
        nextSequence++;
        pendingOffset += chunk;
    }

    /** @return messages published so far (any thread) */
    long messageCount() {
        return messages.get();
    }

    /** @param values {@code messagesPublished, bytesPublished}, for the counters file */
    void sampleCounters(final long[] values) {
        values[0] = messages.get();
        values[1] = bytes.get();
    }

    static int map(final int transportStatus) {
        return switch (transportStatus) {
            case TransportStatus.OK -> PublishStatus.OK;
            case TransportStatus.NOT_CONNECTED -> PublishStatus.NOT_CONNECTED;
            case TransportStatus.CLOSED -> PublishStatus.CLOSED;
            case TransportStatus.FRAME_TOO_LARGE -> PublishStatus.MESSAGE_TOO_LARGE;
            default -> PublishStatus.BACK_PRESSURED;
        };
    }

    /** @return this publication's last-value cache, or null when the topic has none */
    LastValueCache lastValues() {
        return lastValues;
    }

    @Override
    public boolean isConnected() {
        return transportPublication.isConnected() || local != null && local.hasSubscribers();
    }

    @Override
    public int sessionId() {
        return sessionId;
    }

    @Override
    public Topic<T> topic() {
        return topic;
    }

    /**
     * Safe from any thread. Closes now if no offer is in progress; from inside the own offer (a codec's encode), that
     * offer closes the publication as it returns; while another thread's offer is in progress, waits for it to return
     * (the token's release store may reach this thread a little after the offer ends), up to {@link #CLOSE_WAIT_NS},
     * and then leaves the closing to that offer.
     */
    @Override
    public void close() {
        closeRequested = true;
        if (holder == Thread.currentThread()) {
            return; // inside this thread's own offer: release() closes
        }
        final long deadlineNs = System.nanoTime() + CLOSE_WAIT_NS;
        while (!state.compareAndSet(IDLE, BUSY)) {
            if (state.get() == CLOSED || System.nanoTime() - deadlineNs > 0) {
                return; // closed by the offering thread, or left to it (it sees closeRequested as it releases)
            }
            Thread.yield();
        }
        closeNow();
    }

    /** @return true once the transport publication is released */
    boolean isClosed() {
        return state.get() == CLOSED;
    }

    /** Called by the token owner only. */
    private void closeNow() {
        final long deadlineNs = System.nanoTime() + CLOSE_LINGER_NS;
        while (pendingOffset < pendingLength && doFlush() == PublishStatus.BACK_PRESSURED && System.nanoTime() < deadlineNs) {
            Thread.yield();
        }
        if (pendingOffset < pendingLength) {
            LOG.warn("topic {}: publication closed with a fragmented message not fully sent ({} of {} bytes)", topic.name(),
                pendingOffset, pendingLength);
        }
        transportPublication.close();
        state.set(CLOSED);
        bus.onPublicationClosed(this);
    }
}
