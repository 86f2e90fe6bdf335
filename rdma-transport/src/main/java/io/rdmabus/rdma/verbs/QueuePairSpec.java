package io.rdmabus.rdma.verbs;

/**
 * Queue pair creation parameters (one scatter/gather entry per request).
 *
 * @param type           RC or UD
 * @param maxSendWr      outstanding send work requests
 * @param maxRecvWr      outstanding receive work requests
 * @param maxInlineBytes inline send size (0 = none)
 */
public record QueuePairSpec(QpType type, int maxSendWr, int maxRecvWr, int maxInlineBytes) {
    /** Validates the sizes. */
    public QueuePairSpec {
        if (type == null) {
            throw new IllegalArgumentException("QP type is required");
        }
        if (maxSendWr <= 0 || maxRecvWr <= 0 || maxInlineBytes < 0) {
            throw new IllegalArgumentException("QP sizes must be > 0 (inline >= 0): send " + maxSendWr + ", recv " + maxRecvWr
                    + ", inline " + maxInlineBytes);
        }
    }
}
