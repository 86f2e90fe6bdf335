package io.rdmabus.transport.aeron;

import io.rdmabus.spi.CounterDescriptor;

import io.aeron.driver.status.SystemCounterDescriptor;

/**
 * The Aeron transport's counters as data ({@code Transport.counters()}, the bus's counters file, {@code rdma-bus stats}):
 * one descriptor each with its name, where its value comes from ({@link Source}), the thread that writes it and what it
 * counts. A frame is one bus frame, one unfragmented Aeron message; its bytes are the frame's (bus frame header and
 * payload, without Aeron's data header).
 */
enum AeronCounter implements CounterDescriptor {
    FRAMES_SENT("framesSent", Source.PUBLICATIONS, "the thread claiming on the publication (one at a time: an exclusive publication)",
        "frames committed by this transport's publications"),
    BYTES_SENT("bytesSent", Source.PUBLICATIONS, "as framesSent", "the frame bytes of framesSent"),
    CLAIMS_BACK_PRESSURED("claimsBackPressured", Source.PUBLICATIONS, "as framesSent",
        "claims refused because a subscriber or the term window is behind (Publication.BACK_PRESSURED); the bus retries or drops"),
    CLAIMS_NOT_CONNECTED("claimsNotConnected", Source.PUBLICATIONS, "as framesSent",
        "claims refused because no subscriber image is connected (Publication.NOT_CONNECTED)"),
    CLAIMS_ADMIN_ACTION("claimsAdminAction", Source.PUBLICATIONS, "as framesSent",
        "claims refused while the log rotated to its next term (Publication.ADMIN_ACTION): retried"),
    FRAMES_RECEIVED("framesReceived", Source.TRANSPORT, "the receive agent",
        "frames every sink of a subscription took; added once per poll of a subscription, at its end"),
    BYTES_RECEIVED("bytesReceived", Source.TRANSPORT, "the receive agent", "the frame bytes of framesReceived"),
    RECEIVE_BACK_PRESSURED("receiveBackPressured", Source.TRANSPORT, "the receive agent",
        "frames a sink pushed back: left in the log (the image does not advance) and offered again on a later poll"),
    IMAGES_AVAILABLE("imagesAvailable", Source.TRANSPORT, "the Aeron client's conductor thread",
        "publisher images that became available to this transport's subscriptions (a publisher joined)"),
    IMAGES_UNAVAILABLE("imagesUnavailable", Source.TRANSPORT, "the Aeron client's conductor thread",
        "publisher images that went away (a publisher closed, or timed out after its driver stopped sending)"),
    IMAGES_CONNECTED("imagesConnected", Source.GAUGE, "none: read from the Aeron subscriptions",
        "images connected to this transport's subscriptions now (a gauge)"),
    DRIVER_NAKS_SENT("driverNaksSent", Source.DRIVER, "the media driver", driver("NAKs sent (this side saw loss)")),
    DRIVER_NAKS_RECEIVED("driverNaksReceived", Source.DRIVER, "the media driver", driver("NAKs received (a receiver saw loss)")),
    DRIVER_RETRANSMITS_SENT("driverRetransmitsSent", Source.DRIVER, "the media driver", driver("retransmits sent")),
    DRIVER_LOSS_GAP_FILLS("driverLossGapFills", Source.DRIVER, "the media driver",
        driver("gaps a receiver filled with padding (data lost for good: best-effort)")),
    DRIVER_ERRORS("driverErrors", Source.DRIVER, "the media driver", driver("errors the driver recorded in its error log"));

    /** Where a counter's value comes from. */
    enum Source {
        /** This transport's own counter array. */
        TRANSPORT,
        /** The sum over the publications (live ones, plus what closed ones counted). */
        PUBLICATIONS,
        /** Read from Aeron when asked. */
        GAUGE,
        /** A system counter of the media driver ({@link #systemCounter()}). */
        DRIVER
    }

    private final CounterDescriptor.Text text;
    private final Source source;

    AeronCounter(final String counterName, final Source source, final String writer, final String description) {
        this.text = new CounterDescriptor.Text(counterName, writer, description);
        this.source = source;
    }

    @Override
    public CounterDescriptor.Text text() {
        return text;
    }

    private static String driver(final String what) {
        return "the media driver's " + what + "; an external driver (aeron.dir) counts for every client it serves";
    }

    Source source() {
        return source;
    }

    /** Adds to this counter in {@code values} (its only writer thread: a plain read and a release write). */
    void add(final java.util.concurrent.atomic.AtomicLongArray values, final long delta) {
        values.setRelease(ordinal(), values.getPlain(ordinal()) + delta);
    }

    /** @return a new array with one slot per counter */
    static java.util.concurrent.atomic.AtomicLongArray newValues() {
        return new java.util.concurrent.atomic.AtomicLongArray(values().length);
    }

    /** @return the media driver's system counter this one reads, or null if it is not a {@link Source#DRIVER} counter */
    SystemCounterDescriptor systemCounter() {
        return switch (this) {
            case DRIVER_NAKS_SENT -> SystemCounterDescriptor.NAK_MESSAGES_SENT;
            case DRIVER_NAKS_RECEIVED -> SystemCounterDescriptor.NAK_MESSAGES_RECEIVED;
            case DRIVER_RETRANSMITS_SENT -> SystemCounterDescriptor.RETRANSMITS_SENT;
            case DRIVER_LOSS_GAP_FILLS -> SystemCounterDescriptor.LOSS_GAP_FILLS;
            case DRIVER_ERRORS -> SystemCounterDescriptor.ERRORS;
            default -> null;
        };
    }
}
