package io.rdmabus.rdma.transport;

import io.rdmabus.rdma.verbs.CmEventChannel;
import io.rdmabus.rdma.verbs.CmId;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.QueuePair;
import io.rdmabus.rdma.verbs.RecvRequest;
import io.rdmabus.rdma.verbs.SendRequest;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * One RC connection between two transports (one QP per node pair, both directions). Built and destroyed by the
 * cm agent; between those the completion poller owns the receive side and the control sends, publications post
 * data sends. Fields marked "poller" are touched only by the poller thread.
 */
final class Connection {
    final int id;
    final String peer;
    final CmId cmId;
    final CmEventChannel ownChannel;
    final QueuePair qp;
    final MemoryRegion recvMr;
    final MemoryRegion ctrlMr;
    final RecvRequest recvRequest = new RecvRequest();
    final SendRequest ctrlRequest = new SendRequest();
    final UnsafeBuffer recvView;
    final UnsafeBuffer ctrlView;
    final int slotBytes;
    final int recvSlots;

    /** Data credits the peer granted us (sender side), taken by publications, given back by CREDIT messages. */
    final AtomicInteger credits = new AtomicInteger();
    /** Posted sends (data and control) whose completion has not been polled yet. */
    final AtomicInteger outstandingSends = new AtomicInteger();
    /** Publisher threads between their closed-check and their post: destroy waits for 0 after {@link #closed}. */
    final AtomicInteger posters = new AtomicInteger();
    volatile boolean established;
    /** The peer's INIT arrived: it granted credits. */
    volatile boolean ready;
    volatile boolean closed;
    volatile boolean destroyed;

    // set by the cm agent before the poller gets the connection
    /** The peer transport's random node id (from the connect private data), 0 if unknown. */
    long peerNodeId;
    /** The peer's rdma_cm listen endpoint ip:port (from its connect request, or the seed we dialled). */
    String peerEndpoint;
    /** Acceptor with a secret: the proof the connector's AUTH must carry; null once verified (or without a secret). */
    byte[] expectedProof;
    /** Connector with a secret: the proof to send as the first message; null once sent. */
    byte[] proofToSend;
    /** Bound on the wait for the peer's AUTH (System.nanoTime). */
    long authDeadlineNs;

    // poller
    final int[] heldSlot;
    final int[] heldLength;
    int heldHead;
    int heldSize;
    int headSinkIndex;
    int creditsToReturn;
    boolean initSent;
    final boolean[] ctrlBusy = new boolean[RdmaTransportConfig.CONTROL_SLOTS];
    final ArrayDeque<long[]> pendingControl = new ArrayDeque<>();

    Connection(final int id, final String peer, final CmId cmId, final CmEventChannel ownChannel, final QueuePair qp,
               final MemoryRegion recvMr, final MemoryRegion ctrlMr, final int slotBytes, final int recvSlots) {
        this.id = id;
        this.peer = peer;
        this.cmId = cmId;
        this.ownChannel = ownChannel;
        this.qp = qp;
        this.recvMr = recvMr;
        this.ctrlMr = ctrlMr;
        this.slotBytes = slotBytes;
        this.recvSlots = recvSlots;
        this.recvView = new UnsafeBuffer(recvMr.address(), (int) recvMr.sizeBytes());
        this.ctrlView = new UnsafeBuffer(ctrlMr.address(), (int) ctrlMr.sizeBytes());
        this.heldSlot = new int[recvSlots];
        this.heldLength = new int[recvSlots];
    }

    /** @return usable for data: established on our side, peer granted credits, not closing */
    boolean live() {
        return ready && established && !closed;
    }

    /** Takes one data credit if there is one (any thread). */
    boolean tryTakeCredit() {
        while (true) {
            int c = credits.get();
            if (c <= 0) {
                return false;
            }
            if (credits.compareAndSet(c, c - 1)) {
                return true;
            }
        }
    }

    @Override
    public String toString() {
        return "connection#" + id + "(" + peer + ")";
    }
}
