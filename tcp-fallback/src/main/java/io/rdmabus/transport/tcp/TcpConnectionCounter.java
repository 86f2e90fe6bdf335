package io.rdmabus.transport.tcp;

import io.rdmabus.spi.CounterDescriptor;

/**
 * The counters of one TCP connection to a peer ({@code Transport.connections()}, the bus's counters file, {@code rdma-bus
 * stats}), as data: one descriptor each with its name, the thread that writes it and what it counts. Its id is the
 * index in {@link PeerConnection}'s counter array. A data message is one bus frame; its bytes are the frame's (bus frame
 * header and payload, without TCP's 9-byte message header).
 */
enum TcpConnectionCounter implements CounterDescriptor {
    MESSAGES_IN("messagesIn", "event loop", "data messages taken from the peer and offered to every local subscription of their topic"),
    BYTES_IN("bytesIn", "event loop", "the frame bytes of messagesIn"),
    MESSAGES_OUT("messagesOut", "event loop", "data messages handed to the socket (after the outbound queue)"),
    BYTES_OUT("bytesOut", "event loop", "the frame bytes of messagesOut"),
    DROPS("drops", "publisher threads, atomically (only when dropping)",
        "best-effort frames not queued to this peer because its outbound queue was over tcp.outbound.buffer.bytes"),
    QUEUED_BYTES("queuedBytes", "publishers claim, the event loop frees (a gauge)", "bytes queued to this peer, not yet handed to the socket"),
    RECONNECTS("reconnects", "event loop, once at the handshake",
        "connections to this peer node (its node id) this transport had before this one: 0 for the first");

    private final CounterDescriptor.Text text;

    TcpConnectionCounter(final String counterName, final String writer, final String description) {
        this.text = new CounterDescriptor.Text(counterName, writer, description);
    }

    @Override
    public CounterDescriptor.Text text() {
        return text;
    }
}
