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
 */
public record TransportCapabilities(int maxBestEffortFrameLength, int maxReliableFrameLength, boolean multicast, boolean crossHost) {
    /**
     * @param delivery a delivery
     * @return the largest frame for that delivery, header included
     */
    public int maxFrameLength(final Delivery delivery) {
        return delivery == Delivery.BEST_EFFORT ? maxBestEffortFrameLength : maxReliableFrameLength;
    }
}
