package io.rdmabus.rdma.verbs;

/**
 * An rdma_cm operation ended with an unexpected or failure event (for example
 * {@code RDMA_CM_EVENT_REJECTED} when nobody listens on the port, or
 * {@code RDMA_CM_EVENT_UNREACHABLE}).
 */
public final class RdmaConnectException extends VerbsException {
    private static final long serialVersionUID = 1L;

    private final CmEventType eventType;
    private final int status;
    private final boolean noEvent;

    RdmaConnectException(String step, CmEventType eventType, int status, String detail) {
        this(step, eventType, status, detail, false);
    }

    private RdmaConnectException(String step, CmEventType eventType, int status, String detail, boolean noEvent) {
        super(step, status < 0 ? -status : 0, step + " failed: got " + eventType + " (status " + status + ")"
                + (detail.isEmpty() ? "" : ": " + detail));
        this.eventType = eventType;
        this.status = status;
        this.noEvent = noEvent;
    }

    /** The operation's step waited {@code timeoutMs} and no rdma_cm event came. */
    static RdmaConnectException noEventWithin(String step, long timeoutMs) {
        return new RdmaConnectException(step, CmEventType.UNKNOWN, 0, "no event within " + timeoutMs + " ms", true);
    }

    /**
     * @return true if the operation timed out without any rdma_cm event (no reply from the peer at all, not even a
     *         reject): {@link #eventType()} is then {@link CmEventType#UNKNOWN}
     */
    public boolean noEvent() {
        return noEvent;
    }

    /** @return the rdma_cm event that ended the operation */
    public CmEventType eventType() {
        return eventType;
    }

    /** @return the event's status field (negative errno or transport-specific reject reason) */
    public int status() {
        return status;
    }
}
