package io.rdmabus.spi;

/**
 * Data-path status codes returned by {@link TransportPublication#tryClaim}. Negative values are failures;
 * the data path never throws for these conditions (the control path does).
 */
public final class TransportStatus {
    /** The claim succeeded; write the frame, then commit or abort it. */
    public static final int OK = 0;
    /** No subscriber is connected: a best-effort frame would go nowhere; a reliable one must wait. */
    public static final int NOT_CONNECTED = -1;
    /** Flow control (credits, socket, term buffer) is exhausted; retry after the idle strategy. */
    public static final int BACK_PRESSURED = -2;
    /** The transport is busy with an administrative action (e.g. a rotation); retry immediately. */
    public static final int ADMIN_ACTION = -3;
    /** The publication or transport is closed; retrying will not help. */
    public static final int CLOSED = -4;
    /** The frame is longer than {@link TransportPublication#maxFrameLength()}. */
    public static final int FRAME_TOO_LARGE = -5;

    private TransportStatus() {
    }

    /**
     * @param status a status code
     * @return a constant name for logs
     */
    public static String describe(final int status) {
        return switch (status) {
            case OK -> "OK";
            case NOT_CONNECTED -> "NOT_CONNECTED";
            case BACK_PRESSURED -> "BACK_PRESSURED";
            case ADMIN_ACTION -> "ADMIN_ACTION";
            case CLOSED -> "CLOSED";
            case FRAME_TOO_LARGE -> "FRAME_TOO_LARGE";
            default -> "UNKNOWN(" + status + ")";
        };
    }
}
