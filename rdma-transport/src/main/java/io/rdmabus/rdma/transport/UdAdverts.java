package io.rdmabus.rdma.transport;

import io.rdmabus.TransportException;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.SendRequest;
import io.rdmabus.rdma.verbs.WorkCompletions;

import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Consumer;

import org.agrona.concurrent.OneToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Discovery ADVERT datagrams on the bus's UD control group ({@code rdma.discovery=multicast}), over the
 * {@link UdEndpoint}'s QP: one registered send slot per advert page, and the queue of received adverts.
 *
 * <p>Threads: built by {@link UdEndpoint#joinControlGroup} before the agents start. The cm agent posts adverts
 * ({@link #send}) and takes received ones ({@link #received()}); the poller hands received datagrams in
 * ({@link #onReceived}: it looks no further than the envelope and the node id) and completes sends
 * ({@link #onSendComplete}). A page's busy flag is set by the cm thread and cleared by the poller (an atomic array).
 */
final class UdAdverts {
    private final UdEndpoint endpoint;
    /** This transport's node id: its own adverts looped back by the device are dropped. */
    private final long nodeId;
    private final UdGroups.Group controlGroup;
    private final MemoryRegion mr;
    private final UnsafeBuffer view;
    private final SendRequest request = new SendRequest();
    /** Per advert page slot: 1 while its send is in flight (cm thread sets, poller clears). */
    private final AtomicIntegerArray busy = new AtomicIntegerArray(Advert.MAX_PAGES);
    /** Received ADVERT datagrams (copies), poller to cm agent; full = dropped and counted. */
    private final OneToOneConcurrentArrayQueue<byte[]> received = new OneToOneConcurrentArrayQueue<>(64);
    /** Received adverts the queue had no room for (poller writes; volatile: counters() reads it on another thread). */
    private volatile long dropped;

    UdAdverts(final UdEndpoint endpoint, final long nodeId, final UdGroups.Group controlGroup, final MemoryRegion mr) {
        this.endpoint = endpoint;
        this.nodeId = nodeId;
        this.controlGroup = controlGroup;
        this.mr = mr;
        this.view = new UnsafeBuffer(mr.address(), (int) mr.sizeBytes());
    }

    /** @return received ADVERT datagrams (copies) for the cm agent */
    OneToOneConcurrentArrayQueue<byte[]> received() {
        return received;
    }

    /** @return received adverts dropped because the cm agent's queue was full */
    long dropped() {
        return dropped;
    }

    /**
     * Posts one advert page to the control group (cm thread). A page whose previous send is still in flight, or a full
     * send queue, skips this interval.
     *
     * @return true if posted
     */
    boolean send(final int page, final byte[] datagram, final int length) {
        int payloadBytes = endpoint.payloadBytes;
        if (endpoint.isClosed() || page < 0 || page >= Advert.MAX_PAGES || length > payloadBytes || busy.get(page) != 0) {
            return false;
        }
        if (endpoint.outstanding.incrementAndGet() > UdEndpoint.SEND_QUEUE_DEPTH) {
            endpoint.outstanding.decrementAndGet();
            return false;
        }
        int offset = page * payloadBytes;
        view.putBytes(offset, datagram, 0, length);
        busy.set(page, 1);
        int rc;
        try {
            rc = endpoint.qp.postSend(request.prepareSend(WorkRequestId.of(0, WorkRequestId.KIND_UD_ADVERT_SEND, 0, page), mr, offset,
                    length, true).toUd(controlGroup.ah, UdEndpoint.MULTICAST_QPN, endpoint.qkey));
        } catch (RuntimeException e) {
            rc = -1;
        }
        if (rc != 0) {
            busy.set(page, 0);
            endpoint.outstanding.decrementAndGet();
            return false;
        }
        return true;
    }

    /** Poller: an advert send of page {@code slot} completed with {@code status}. */
    void onSendComplete(final int slot, final int status, final Consumer<Throwable> errors) {
        endpoint.outstanding.decrementAndGet();
        if (slot < Advert.MAX_PAGES) {
            busy.set(slot, 0);
        }
        if (status != WorkCompletions.SUCCESS && status != WorkCompletions.WR_FLUSH_ERR && !endpoint.isClosed()) {
            errors.accept(new TransportException("rdma UD advert send failed: " + WorkCompletions.statusText(status)));
        }
    }

    /**
     * Poller: an ADVERT datagram of {@code length} bytes at {@code base} of {@code recvView}; others' are copied to the
     * cm agent.
     *
     * @return false if it is this node's own, looped back (the caller counts it)
     */
    boolean onReceived(final UnsafeBuffer recvView, final int base, final int length) {
        if (recvView.getLong(base + Advert.NODE_OFFSET, ByteOrder.LITTLE_ENDIAN) == nodeId) {
            return false; // unicast mode: the device loops the group's datagrams back to our own QP
        }
        if (received.remainingCapacity() == 0) {
            dropped++;
            return true;
        }
        byte[] copy = new byte[length]; // control traffic (about one per node and interval): the cm agent verifies it
        recvView.getBytes(base, copy);
        if (!received.offer(copy)) {
            dropped++;
        }
        return true;
    }

    /** Frees the send slots (the endpoint closes, its QP is gone). */
    void close() {
        DeviceResources.closeQuietly(mr);
        request.close();
    }
}
