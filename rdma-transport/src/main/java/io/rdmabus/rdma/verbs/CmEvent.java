package io.rdmabus.rdma.verbs;

/**
 * A copied-out rdma_cm event (the native event is acknowledged right after copying).
 *
 * @param type        event type
 * @param status      event status (negative errno or reject reason)
 * @param idAddress   native {@code rdma_cm_id*} the event is for
 * @param listenIdAddress native listening id for CONNECT_REQUEST, else 0
 * @param privateData connection private data (may be empty)
 * @param ud          UD parameters (SIDR / multicast join), or null
 * @param readAtNs    {@link System#nanoTime()} when it was read from the channel (how long a request waited for us)
 */
public record CmEvent(CmEventType type, int status, long idAddress, long listenIdAddress, byte[] privateData, UdPeer ud, long readAtNs) {
}
