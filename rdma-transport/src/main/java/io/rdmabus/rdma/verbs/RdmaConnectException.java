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

    RdmaConnectException(String step, CmEventType eventType, int status, String detail) {
        super(step, status < 0 ? -status : 0, step + " failed: got " + eventType + " (status " + status + ")"
                + (detail.isEmpty() ? "" : ": " + detail));
        this.eventType = eventType;
        this.status = status;
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
