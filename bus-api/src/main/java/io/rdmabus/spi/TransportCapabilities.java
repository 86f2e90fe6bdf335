package io.rdmabus.spi;

import io.rdmabus.Delivery;

/**
 * What a transport can carry. The bus, not each transport, decides what to do with bigger messages:
 * reliable messages are fragmented into frames of at most {@link #maxFrameLength(Delivery)}; best-effort
 * messages that do not fit one frame are refused at publish time.
 *
 * @param maxBestEffortFrameLength largest best-effort frame in bytes, header included (e.g. path MTU minus headers)
 * @param maxReliableFrameLength   largest reliable frame in bytes, header included
 * @param multicast                whether best-effort fan-out uses multicast (one send, N receivers)
 * @param crossHost                whether peers on other hosts are reachable (false for IPC)
 * @param loopback                 whether a publication's frames reach the subscriptions of the same transport instance
 *                                 (the same bus) by themselves, exactly once (Aeron: one media driver serves both). When
 *                                 false, the bus hands its own publications' messages to its own subscriptions itself
 *                                 (docs/architecture.md, "Same-bus loopback"), so a transport must not do both.
 * @param receivesOnAgentHost      whether, when the bus hosts the transport's agents ({@code SHARED}, {@code INVOKER}:
 *                                 {@link AgentHost#dedicatesThreads()} false), frames reach the subscriptions' sinks only
 *                                 from those agents, inside the bus's duty cycle (Aeron's receive agent, the rdma poller).
 *                                 The bus then signals a copying subscriber from that cycle only, and the exclusion among
 *                                 its signalling threads costs no atomic operation. False (TCP: frames arrive on the event
 *                                 loops) makes a {@code SHARED} bus also signal on the receiving threads, under an atomic
 *                                 flag. Either is safe: a frame that arrives on another thread goes through the
 *                                 subscription's ring.
 */
public record TransportCapabilities(int maxBestEffortFrameLength, int maxReliableFrameLength, boolean multicast, boolean crossHost,
                                    boolean loopback, boolean receivesOnAgentHost) {
    /**
     * A transport whose frames may arrive on threads of its own (see {@link #receivesOnAgentHost()}).
     *
     * @param maxBestEffortFrameLength largest best-effort frame
     * @param maxReliableFrameLength   largest reliable frame
     * @param multicast                best-effort fan-out by multicast
     * @param crossHost                peers on other hosts reachable
     * @param loopback                 the transport loops a bus's own frames back to it
     */
    public TransportCapabilities(final int maxBestEffortFrameLength, final int maxReliableFrameLength, final boolean multicast,
                                 final boolean crossHost, final boolean loopback) {
        this(maxBestEffortFrameLength, maxReliableFrameLength, multicast, crossHost, loopback, false);
    }

    /**
     * A transport that does not loop back (the bus does it).
     *
     * @param maxBestEffortFrameLength largest best-effort frame
     * @param maxReliableFrameLength   largest reliable frame
     * @param multicast                best-effort fan-out by multicast
     * @param crossHost                peers on other hosts reachable
     */
    public TransportCapabilities(final int maxBestEffortFrameLength, final int maxReliableFrameLength, final boolean multicast,
                                 final boolean crossHost) {
        this(maxBestEffortFrameLength, maxReliableFrameLength, multicast, crossHost, false, false);
    }

    /**
     * @param delivery a delivery
     * @return the largest frame for that delivery, header included
     */
    public int maxFrameLength(final Delivery delivery) {
        return delivery == Delivery.BEST_EFFORT ? maxBestEffortFrameLength : maxReliableFrameLength;
    }
}
