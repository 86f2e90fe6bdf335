package io.rdmabus.rdma.transport;

import io.rdmabus.TransportException;

import java.nio.ByteOrder;
import java.util.function.BiConsumer;

/**
 * The control messages of the RC connections: the connector's AUTH, INIT, queued SUB/UNSUB/UD_INFO/RESUME/RESUME_FAILED,
 * batched CREDITs, the keepalive and BYE, each posted signalled from one of a connection's control slots. Part of the
 * poller: only its thread calls it.
 */
final class ControlSender {
    private final RdmaContext ctx;
    private final RdmaTransportConfig config;
    /** The poller's "tear this connection down" (with an error to report, or null). */
    private final BiConsumer<Connection, Throwable> fail;
    /** Diagnostics, read racily through the transport's pollerStats(): control sends posted, CREDITs among them. */
    long controlSends;
    long creditSends;

    ControlSender(final RdmaContext ctx, final BiConsumer<Connection, Throwable> fail) {
        this.ctx = ctx;
        this.config = ctx.config;
        this.fail = fail;
    }

    /**
     * Sends what {@code c} owes: AUTH, INIT, the queued messages, CREDITs (batched; all of them when {@code idle}) and,
     * when {@code keepalive} is due and nothing is in flight, a keepalive.
     *
     * @return messages posted
     */
int flush(final Connection c, final boolean idle, final boolean keepalive) {
        if (c.closed) {
            return 0;
        }
        int sent = 0;
        if (c.expectedProof != null) {
            // acceptor waiting for the connector's AUTH: grant nothing (no INIT = no credits, no SUB) until then
            if (System.nanoTime() - c.authDeadlineNs > 0) {
                ctx.refusals.refused(c.peer, "no AUTH within " + config.connectTimeoutMs() + " ms");
                fail.accept(c, null);
            }
            return 0;
        }
        if (c.proofToSend != null) {
            if (!sendAuth(c)) {
                return 0;
            }
            c.proofToSend = null;
            sent++;
        }
        if (!c.initSent) {
            if (!send(c, Wire.INIT, config.dataCredits(), config.maxFrameBytes())) {
                return 0;
            }
            c.initSent = true;
            sent++;
        }
        long[] m;
        while ((m = c.pendingControl.peek()) != null) {
            boolean ok = m[0] == Wire.RESUME || m[0] == Wire.RESUME_FAILED ? sendResumeMessage(c, m)
                    : send(c, (int) m[0], (int) m[1], m.length > 2 ? (int) m[2] : 0, m.length > 3 ? (int) m[3] : 0);
            if (!ok) {
                return sent;
            }
            c.pendingControl.poll();
            sent++;
        }
        int threshold = Math.max(1, config.dataCredits() / 4);
        // batch credits (a CREDIT costs a send and two completions); an idle poller returns what it has at once
        // quiet with unsignalled data sends whose completion never comes (no new post since the last quiet check,
        // so the publisher stopped rather than paused): a signalled CREDIT, possibly of 0, releases them
        boolean tail = false;
        if (idle) {
            long posted = c.postedSends();
            tail = posted == c.postedAtLastQuiet && !c.anyControlInFlight() && c.unreleasedSends() > 0;
            c.postedAtLastQuiet = posted;
        }
        if (c.creditsToReturn >= threshold || (c.creditsToReturn > 0 && idle) || tail) {
            if (send(c, Wire.CREDIT, c.creditsToReturn, 0)) {
                creditSends++;
                c.creditsToReturn = 0;
                sent++;
            }
        } else if (keepalive && sent == 0 && !c.anyControlInFlight() && c.unreleasedSends() == 0) {
            // nothing in flight: a peer gone without a word (link down, host lost, its QP failed while its DREQ could
            // not get through) would never be noticed, and a publisher out of its credits would wait forever; a
            // signalled CREDIT (of what is owed, maybe 0) fails with RETRY_EXC_ERR after the RC retries if nobody answers
            if (send(c, Wire.CREDIT, c.creditsToReturn, 0)) {
                ctx.counters.increment(RdmaCounter.KEEPALIVE_SENDS);
                c.creditsToReturn = 0;
                sent++;
            }
        }
        return sent;
    }

    /** RESUME (24 bytes) or RESUME_FAILED (32 bytes) from a pending entry {type, topic, session, arg3, next[, oldest]}. */
    private boolean sendResumeMessage(final Connection c, final long[] m) {
        int slot = c.freeControlSlot();
        if (slot < 0) {
            return false;
        }
        int base = slot * Wire.CONTROL_BYTES;
        c.ctrlView.putInt(base + Wire.TYPE_OFFSET, (int) m[0], ByteOrder.LITTLE_ENDIAN);
        c.ctrlView.putInt(base + Wire.ARG_OFFSET, (int) m[1], ByteOrder.LITTLE_ENDIAN);
        c.ctrlView.putInt(base + Wire.ARG2_OFFSET, (int) m[2], ByteOrder.LITTLE_ENDIAN);
        c.ctrlView.putInt(base + Wire.ARG3_OFFSET, (int) m[3], ByteOrder.LITTLE_ENDIAN);
        c.ctrlView.putLong(base + Wire.NEXT_SEQUENCE_OFFSET, m[4], ByteOrder.LITTLE_ENDIAN);
        if (m[0] == Wire.RESUME_FAILED) {
            c.ctrlView.putLong(base + Wire.OLDEST_SEQUENCE_OFFSET, m[5], ByteOrder.LITTLE_ENDIAN);
        }
        return postControl(c, slot, m[0] == Wire.RESUME ? Wire.RESUME_BYTES : Wire.RESUME_FAILED_BYTES);
    }

    private boolean sendAuth(final Connection c) {
        int slot = c.freeControlSlot();
        if (slot < 0) {
            return false;
        }
        int base = slot * Wire.CONTROL_BYTES;
        c.ctrlView.putInt(base + Wire.TYPE_OFFSET, Wire.AUTH, ByteOrder.LITTLE_ENDIAN);
        c.ctrlView.putInt(base + Wire.ARG_OFFSET, 0, ByteOrder.LITTLE_ENDIAN);
        c.ctrlView.putBytes(base + Wire.ENVELOPE_BYTES, c.proofToSend);
        return postControl(c, slot, Wire.AUTH_BYTES);
    }

    boolean send(final Connection c, final int type, final int arg, final int arg2) {
        return send(c, type, arg, arg2, 0);
    }

    private boolean send(final Connection c, final int type, final int arg, final int arg2, final int arg3) {
        int slot = c.freeControlSlot();
        if (slot < 0) {
            return false;
        }
        int base = slot * Wire.CONTROL_BYTES;
        c.ctrlView.putInt(base + Wire.TYPE_OFFSET, type, ByteOrder.LITTLE_ENDIAN);
        c.ctrlView.putInt(base + Wire.ARG_OFFSET, arg, ByteOrder.LITTLE_ENDIAN);
        c.ctrlView.putInt(base + Wire.ARG2_OFFSET, arg2, ByteOrder.LITTLE_ENDIAN);
        c.ctrlView.putInt(base + Wire.ARG3_OFFSET, arg3, ByteOrder.LITTLE_ENDIAN);
        return postControl(c, slot, Wire.CONTROL_MESSAGE_BYTES);
    }

    private boolean postControl(final Connection c, final int slot, final int lengthBytes) {
        int base = slot * Wire.CONTROL_BYTES;
        c.ctrlBusy[slot] = true;
        controlSends++;
        c.outstandingSends.incrementAndGet();
        int rc;
        try {
            synchronized (c.postLock) {
                c.ctrlRequest.prepareSend(WorkRequestId.of(c.id, WorkRequestId.KIND_CTRL_SEND, 0, slot), c.ctrlMr, base, lengthBytes, true);
                if (lengthBytes <= c.maxInlineBytes) {
                    c.ctrlRequest.inline();
                }
                rc = c.qp.postSend(c.ctrlRequest);
                if (rc == 0) {
                    c.controlSendPosted(slot);
                }
            }
        } catch (RuntimeException e) {
            rc = -1;
        }
        if (rc != 0) {
            c.ctrlBusy[slot] = false;
            c.outstandingSends.decrementAndGet();
            if (rc != 12) { // ENOMEM: send queue full, retry later
                fail.accept(c, new TransportException(c + ": posting a control message failed: " + rc));
            }
            return false;
        }
        return true;
    }
}
