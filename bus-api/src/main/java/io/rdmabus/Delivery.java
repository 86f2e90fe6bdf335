package io.rdmabus;

/** How a topic's messages travel. Chosen per topic; a topic has exactly one delivery. */
public enum Delivery {
    /**
     * Small, loss-tolerant messages (market-data ticks): datagrams (RDMA UD, Aeron UDP), never retransmitted.
     * Loss is never hidden: every sequence gap is counted and reported on the next delivered message.
     * A message larger than the transport's best-effort frame size is refused at publish time.
     */
    BEST_EFFORT,
    /**
     * Ordered, lossless streams (trades, reference data): RDMA RC, Aeron, TCP. A slow subscriber slows its
     * publisher through credits instead of losing data. Messages larger than a frame are fragmented by the bus.
     */
    RELIABLE
}
