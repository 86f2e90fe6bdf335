package io.rdmabus.rdma.transport;

import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.SendRequest;

import java.util.function.IntFunction;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * Gap recovery, publisher side: serves a subscriber's NAK by re-sending the frames its UD publication still retains
 * ({@link UdRetention}) over the RC connection the NAK came on, as RECOVERED messages, each under one of that
 * connection's data credits. A frame that is no longer retained, or that finds no credit, no free staging slot or a
 * full send ring, is not sent: the subscriber reports it lost when its time bound ends, exactly as without recovery.
 *
 * <p>Each frame is copied from the retention into a staging slot of registered memory (the endpoint's, freed with it)
 * and posted from there, inline when it fits the connection's inline size (the slot is free again at once); otherwise
 * the slot stays taken until the connection released that send (RC completes in order: {@link Connection#releasedSends})
 * or the connection is destroyed. The sends go through the connection's send ring like a publication's, with pool index
 * -1 (no publication to release).
 *
 * <p>Owner: the poller thread (it handles the NAK); no allocation per NAK or frame.
 */
final class UdRecoveryServer {
    /** Staging slots: frames of NAKs in flight at once, over all connections. */
    static final int STAGING_SLOTS = 64;

    private final MemoryRegion staging;
    private final UnsafeBuffer stagingView;
    private final int stride;
    /** Finds the retention of the UD publication of a topic id (null: none, or recovery off). */
    private final IntFunction<UdRetention> retentionOf;
    private final ControlFlyweight tx = new ControlFlyweight();
    private final SendRequest request = new SendRequest();
    /** Per staging slot: the connection whose send still reads it (null: free), and that send's post sequence. */
    private final Connection[] stagedOn = new Connection[STAGING_SLOTS];
    private final long[] stagedSeq = new long[STAGING_SLOTS];
    private int cursor;

    // counters (written by the poller only, read racily by counters())
    private volatile long naksServed;
    private volatile long framesResent;

    /**
     * @param staging     registered memory of {@link #STAGING_SLOTS} x {@code stride} bytes (no remote access)
     * @param stride      one staging slot: the envelope plus the largest best-effort frame
     * @param retentionOf the retention of a topic's UD publication
     */
    UdRecoveryServer(final MemoryRegion staging, final int stride, final IntFunction<UdRetention> retentionOf) {
        this.staging = staging;
        this.stride = stride;
        this.stagingView = new UnsafeBuffer(staging.address(), (int) staging.sizeBytes());
        this.retentionOf = retentionOf;
    }

    /**
     * A subscriber on {@code c} lost {@code count} frames of session {@code session} of {@code topicId} from {@code first}
     * on (the NAK was bounds-checked by {@code ControlMessages.classify}).
     *
     * @return frames re-sent
     */
    int onNak(final Connection c, final int topicId, final int session, final long first, final int count) {
        final UdRetention retention = retentionOf.apply(topicId);
        if (retention == null || !c.live()) {
            return 0;
        }
        naksServed++;
        int sent = 0;
        for (long seq = first; seq < first + count; seq++) {
            final int slot = cursor;
            if (!free(slot)) {
                break; // every staging slot is in flight: the rest times out at the subscriber
            }
            final int base = slot * stride;
            final int length = retention.copy(seq, session, stagingView, base + Wire.ENVELOPE_BYTES);
            if (length < 0) {
                continue; // no longer retained
            }
            tx.wrap(stagingView, base).recovered(topicId);
            if (!c.tryTakeCredit()) {
                break;
            }
            final int bytes = Wire.ENVELOPE_BYTES + length;
            final long postSeq = post(c, base, bytes);
            if (postSeq < 0) {
                c.credits.incrementAndGet();
                break;
            }
            if (bytes > c.maxInlineBytes) {
                stagedOn[slot] = c; // the device reads the slot when it sends
                stagedSeq[slot] = postSeq;
            }
            cursor = slot + 1 == STAGING_SLOTS ? 0 : slot + 1;
            sent++;
        }
        framesResent += sent;
        return sent;
    }

    private boolean free(final int slot) {
        final Connection c = stagedOn[slot];
        if (c == null) {
            return true;
        }
        if (c.destroyed || c.releasedSends() > stagedSeq[slot]) {
            stagedOn[slot] = null;
            return true;
        }
        return false;
    }

    /** Posts one RECOVERED message from the staging memory (as a publication posts a frame). @return its post sequence, or -1 */
    private long post(final Connection c, final int base, final int bytes) {
        c.posters.incrementAndGet();
        try {
            synchronized (c.postLock) {
                if (c.closed) {
                    return -1;
                }
                final long seq = c.nextDataSend(-1, 0);
                if (seq < 0) {
                    return -1;
                }
                final boolean signaled = c.signalNext();
                request.prepareSend(WorkRequestId.ofDataSend(c.id, seq), staging, base, bytes, signaled);
                if (bytes <= c.maxInlineBytes) {
                    request.inline();
                }
                if (c.qp.postSend(request) != 0) {
                    return -1;
                }
                c.outstandingSends.incrementAndGet();
                c.dataSendPosted(seq, signaled, bytes - Wire.ENVELOPE_BYTES);
                return seq;
            }
        } catch (RuntimeException e) {
            return -1;
        } finally {
            c.posters.decrementAndGet();
        }
    }

    /** @return NAKs received for a topic this node publishes over UD with recovery on */
    long naksServed() {
        return naksServed;
    }

    /** @return retained frames re-sent for NAKs */
    long framesResent() {
        return framesResent;
    }

    /** Frees the poster's work request (the staging memory is the endpoint's). */
    void close() {
        request.close();
    }
}
