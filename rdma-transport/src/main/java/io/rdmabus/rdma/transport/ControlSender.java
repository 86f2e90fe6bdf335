package io.rdmabus.rdma.transport;

import io.rdmabus.TransportException;

import java.util.function.BiConsumer;

/**
 * The control messages of the RC connections: the connector's AUTH, INIT, queued SUB/UNSUB/UD_INFO/RESUME/RESUME_FAILED,
 * batched CREDITs and TOPIC_CREDITs, the keepalive and BYE, each encoded through a {@link ControlFlyweight} into one of a connection's
 * control slots (queued ones were encoded into its {@link ControlQueue}: copied) and posted signalled. Part of the
 * poller: only its thread calls it.
 */
final class ControlSender {
    private final RdmaContext ctx;
    private final RdmaTransportConfig config;
    /** The poller's "tear this connection down" (with an error to report, or null). */
    private final BiConsumer<Connection, Throwable> fail;
    /** Encodes the message into the control slot being posted. */
    private final ControlFlyweight tx = new ControlFlyweight();
    /** Diagnostics, read racily through the transport's pollerStats(): control sends posted, CREDITs among them. */
    long controlSends;
    long creditSends;
    long topicCreditSends;

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
            if (!sendInit(c)) {
                return 0;
            }
            c.initSent = true;
            sent++;
        }
        while (!c.pendingControl.isEmpty()) {
            if (!sendQueued(c)) {
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
            if (sendCredit(c, c.creditsToReturn)) {
                creditSends++;
                c.creditsToReturn = 0;
                sent++;
            }
        } else if (keepalive && sent == 0 && !c.anyControlInFlight() && c.unreleasedSends() == 0) {
            // nothing in flight: a peer gone without a word (link down, host lost, its QP failed while its DREQ could
            // not get through) would never be noticed, and a publisher out of its credits would wait forever; a
            // signalled CREDIT (of what is owed, maybe 0) fails with RETRY_EXC_ERR after the RC retries if nobody answers
            if (sendCredit(c, c.creditsToReturn)) {
                ctx.counters.increment(RdmaCounter.KEEPALIVE_SENDS);
                c.creditsToReturn = 0;
                sent++;
            }
        }
        return sent + flushTopicCredits(c, threshold, idle);
    }

    /**
     * Returns the topic windows owed on {@code c} (frames of a topic consumed or dropped here): a TOPIC_CREDIT per topic
     * once a quarter of the window is owed, or whatever is owed when {@code idle}, as CREDIT batches. A publisher held
     * back by a topic window has nothing else in flight for that topic, so the owed frames reach one of the two.
     *
     * @return messages posted
     */
    private int flushTopicCredits(final Connection c, final int threshold, final boolean idle) {
        int sent = 0;
        for (int i = 0; i < c.topicQueueList.size() && !c.closed; i++) {
            TopicQueue q = c.topicQueueList.get(i);
            if (q.owed >= threshold || (q.owed > 0 && idle)) {
                int slot = c.freeControlSlot();
                if (slot < 0 || !postControl(c, slot, tx.wrap(c.ctrlView, slot * Wire.CONTROL_BYTES).encodeTopicCredit(q.topicId, q.owed))) {
                    return sent; // no free slot: the rest go out on a later duty cycle
                }
                topicCreditSends++;
                q.owed = 0;
                sent++;
            }
        }
        return sent;
    }

    /** Copies the head of {@code c}'s queue (encoded when it was queued) into a free control slot and posts it. */
    private boolean sendQueued(final Connection c) {
        int slot = c.freeControlSlot();
        if (slot < 0) {
            return false;
        }
        ControlQueue q = c.pendingControl;
        int length = q.headLength();
        c.ctrlView.putBytes(slot * Wire.CONTROL_BYTES, q.buffer(), q.headOffset(), length);
        return postControl(c, slot, length);
    }

    private boolean sendAuth(final Connection c) {
        int slot = c.freeControlSlot();
        if (slot < 0) {
            return false;
        }
        return postControl(c, slot, tx.wrap(c.ctrlView, slot * Wire.CONTROL_BYTES).encodeAuth(c.proofToSend));
    }

    /** Sends CREDIT returning {@code credits} now. @return false if no control slot was free or the post failed */
    private boolean sendCredit(final Connection c, final int credits) {
        int slot = c.freeControlSlot();
        if (slot < 0) {
            return false;
        }
        return postControl(c, slot, tx.wrap(c.ctrlView, slot * Wire.CONTROL_BYTES).encodeCredit(credits));
    }

    private boolean sendInit(final Connection c) {
        int slot = c.freeControlSlot();
        if (slot < 0) {
            return false;
        }
        return postControl(c, slot, tx.wrap(c.ctrlView, slot * Wire.CONTROL_BYTES).encodeInit(config.dataCredits(), config.maxFrameBytes()));
    }

    /** Sends BYE now (the transport closes). @return false if no control slot was free or the post failed */
    boolean sendBye(final Connection c) {
        int slot = c.freeControlSlot();
        if (slot < 0) {
            return false;
        }
        return postControl(c, slot, tx.wrap(c.ctrlView, slot * Wire.CONTROL_BYTES).encodeBye());
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
