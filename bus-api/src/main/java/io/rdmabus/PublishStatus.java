package io.rdmabus;

/**
 * Results of {@link BusPublication#offer}: the data path returns these instead of throwing.
 * Negative values mean the value was not taken.
 */
public final class PublishStatus {
    /** The value was taken; it will reach every connected subscriber (reliable) or was sent once (best effort). */
    public static final int OK = 0;
    /** No subscriber is connected. Best effort: the value is dropped (and counted). Reliable: retry later. */
    public static final int NOT_CONNECTED = -1;
    /** Credits/buffers exhausted (a slow subscriber, or a fragmented message still going out): retry later. */
    public static final int BACK_PRESSURED = -2;
    /** The publication or bus is closed. */
    public static final int CLOSED = -4;
    /** The encoded value exceeds the topic's limit, or one frame for a best-effort topic. */
    public static final int MESSAGE_TOO_LARGE = -6;

    private PublishStatus() {
    }

    /**
     * @param status a status
     * @return its constant name
     */
    public static String describe(final int status) {
        return switch (status) {
            case OK -> "OK";
            case NOT_CONNECTED -> "NOT_CONNECTED";
            case BACK_PRESSURED -> "BACK_PRESSURED";
            case CLOSED -> "CLOSED";
            case MESSAGE_TOO_LARGE -> "MESSAGE_TOO_LARGE";
            default -> "UNKNOWN(" + status + ")";
        };
    }
}
