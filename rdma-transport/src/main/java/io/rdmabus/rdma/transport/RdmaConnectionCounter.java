package io.rdmabus.rdma.transport;

import io.rdmabus.spi.CounterDescriptor;

/**
 * The counters of one RC {@link Connection} ({@code Transport.connections()}, the bus's counters file, {@code rdma-bus
 * stats}), as data: one descriptor each with its name, the thread that writes it and what it counts. Its id is the index
 * in {@link Connection}'s counter array; the gauges are read from the connection's own state when asked. A data message
 * is one bus frame; its bytes are the frame's (bus frame header and payload, without the 8-byte RC envelope).
 */
enum RdmaConnectionCounter implements CounterDescriptor {
    MESSAGES_IN("messagesIn", false, "the poller", "data messages received on this connection (before the bus's sequence rule)"),
    BYTES_IN("bytesIn", false, "the poller", "the frame bytes of messagesIn"),
    MESSAGES_OUT("messagesOut", false,
            "the thread holding the connection's postLock (a publisher, or the poller replaying or re-sending for a NAK)",
            "data sends posted on this connection, replays and recovered UD frames included"),
    BYTES_OUT("bytesOut", false, "as messagesOut", "the frame bytes of messagesOut"),
    DATA_POSTS("dataPosts", false, "as messagesOut",
            "ibv_post_send calls that posted messagesOut: one per message, except a batch offer's messages, one call per batch"),
    DROPS("drops", false, "publisher threads, atomically (only when dropping)",
            "BEST_EFFORT frames not sent to this peer because it had granted no credit (it is behind)"),
    CREDITS("credits", true, "publishers take, the poller adds (a gauge)",
            "data credits the peer granted that are not used yet: the frames this node may still post to it"),
    OUTSTANDING_SENDS("outstandingSends", true, "posters add, the poller releases (a gauge)",
            "CQ depth of this connection: its send work requests (data and control) posted whose completion the poller has not "
                    + "taken yet; with selective signalling a completion releases every send before it"),
    RECONNECTS("reconnects", false, "the cm agent, once before the poller takes the connection",
            "connections to this peer node (its node id) this transport had before this one: 0 for the first");

    private final CounterDescriptor.Text text;
    private final boolean gauge;

    RdmaConnectionCounter(final String counterName, final boolean gauge, final String writer, final String description) {
        this.text = new CounterDescriptor.Text(counterName, writer, description);
        this.gauge = gauge;
    }

    @Override
    public CounterDescriptor.Text text() {
        return text;
    }

    /** @return whether it is a level read from the connection's state rather than a count */
    boolean gauge() {
        return gauge;
    }
}
