package io.rdmabus.rdma.transport;

import java.util.concurrent.locks.LockSupport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A publication's claim in progress, so {@code close()} on another thread does not free the registered slots while
 * the publisher still writes into them (a raw {@code UnsafeBuffer} over the memory region: the arena's liveness check
 * does not apply). The publisher enters before it re-checks {@code closed} and leaves after its commit or abort;
 * close sets {@code closed} first, then waits for the gate to open, and leaks the memory (with a warning) rather than
 * free it under a publisher that does not leave in time.
 *
 * <p>Batches (the SPI's {@code beginBatch}/{@code endBatch}, the bus's batch offer): a batch holds the gate from its
 * start to its end, across its claims, since the publication keeps committed frames to post at the end of the batch
 * and a {@code close()} on another thread must wait for that post too. Inside a batch {@link #enterClaim} and
 * {@link #endClaim} leave the gate as it is.
 */
final class ClaimGate {
    private static final Logger LOG = LoggerFactory.getLogger(ClaimGate.class);
    private volatile boolean inClaim;
    /** The thread of the claim in progress (written by it before {@link #inClaim}'s volatile write). */
    private Thread claimer;
    /** A batch holds the gate (the publisher thread's own). */
    private boolean batch;

    /** The publisher starts a claim (then re-checks its publication's closed flag): enters, unless a batch holds the gate. */
    void enterClaim() {
        if (!batch) {
            enter();
        }
    }

    /** The claim was committed, aborted or refused: leaves, unless a batch holds the gate. */
    void endClaim() {
        if (!batch) {
            inClaim = false;
        }
    }

    /** @return false if a batch holds the gate already; else it does from now on */
    boolean beginBatch() {
        if (batch) {
            return false;
        }
        enter();
        batch = true;
        return true;
    }

    /** @return whether a batch holds the gate (publisher thread) */
    boolean inBatch() {
        return batch;
    }

    /** The batch ended (what it held is posted): leaves the gate. */
    void endBatch() {
        batch = false;
        inClaim = false;
    }

    private void enter() {
        claimer = Thread.currentThread();
        inClaim = true;
    }

    /** @return a claim is in progress (any thread) */
    boolean inClaim() {
        return inClaim;
    }

    /** @return a claim is in progress on the calling thread (close() called by the publisher itself mid-claim) */
    boolean heldByCurrentThread() {
        return inClaim && claimer == Thread.currentThread();
    }

    /**
     * Waits until no claim is in progress; if one still is at the deadline, warns that {@code owner}'s memory is leaked.
     *
     * @param deadlineNs  {@link System#nanoTime()} bound
     * @param owner       the closing publication (for the warning)
     * @param lingerMs    the linger the deadline came from (for the warning)
     * @param memoryBytes the registered memory the caller must then leave allocated (for the warning)
     * @return true if the gate is open (the memory may be freed), false if it must be leaked
     */
    boolean awaitOpen(final long deadlineNs, final Object owner, final long lingerMs, final long memoryBytes) {
        while (inClaim && System.nanoTime() - deadlineNs < 0) {
            LockSupport.parkNanos(1_000_000);
        }
        if (inClaim) {
            LOG.warn("{}: closed while a publisher thread was still inside a claim after {} ms; its {} bytes of registered memory are "
                    + "leaked rather than freed under it", owner, lingerMs, memoryBytes);
            return false;
        }
        return true;
    }
}
