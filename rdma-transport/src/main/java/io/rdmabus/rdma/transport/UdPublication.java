package io.rdmabus.rdma.transport;

import io.rdmabus.rdma.verbs.AddressHandle;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.SendRequestList;
import io.rdmabus.spi.FrameClaim;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;

import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A BEST_EFFORT topic's sending side over UD: a registered pool of datagram-sized send slots. {@link #tryClaim} takes
 * the next slot if its previous sends completed; {@link #commit} posts one datagram to the topic's multicast group
 * (multicast mode) or one per subscriber's address handle (unicast mode) from that slot, which returns to the pool
 * when the last of those sends completes. Who subscribes is known from the SUB messages on the RC control
 * connections ({@link TopicRoute}); no credits: UD never back-pressures the publisher for a slow subscriber (the
 * subscriber's receive queue drops, and the bus reports the gap from its sequence numbers).
 *
 * <p>{@link TransportStatus#NOT_CONNECTED} when no subscriber is known, {@link TransportStatus#BACK_PRESSURED} when
 * the slot is still in flight or the UD send queue is full.
 */
final class UdPublication implements TransportPublication, FrameClaim {
    private static final long LINGER_NS = TimeUnit.SECONDS.toNanos(2);

    final int poolIndex;
    final UdGroups.Group group;
    private final UdEndpoint endpoint;
    private final TopicDescriptor topic;
    private final TopicRoute route;
    private final int maxFrame;
    private final int slotBytes;
    private final int slots;
    private final MemoryRegion mr;
    private final UnsafeBuffer view;
    /**
     * The frame's datagrams, one per destination, posted with one {@code ibv_post_send} ({@link UdSendRing#post}):
     * preallocated off-heap work requests, owned by the thread holding the claim ({@link ClaimGate}).
     */
    private final SendRequestList requests;
    /** Per slot: datagrams posted from it whose completion the poller has not seen yet (0 = free). */
    private final AtomicIntegerArray refs;
    private final UdEndpoint.UdRemote[] targets = new UdEndpoint.UdRemote[64];
    private int targetCount;
    private boolean holdingRemotes;
    private int cursor;
    private boolean claimed;
    private int claimLength;
    private volatile boolean closed;
    private final ClaimGate gate = new ClaimGate();
    /** The last frames, copied, for subscribers' NAKs ({@code rdma.ud.recovery.frames}); null when recovery is off. */
    private final UdRetention retention;
    private long sent;
    private long postFailures;
    private long skippedNoAddress;

    UdPublication(final UdEndpoint endpoint, final int poolIndex, final TopicDescriptor topic, final TopicRoute route, final MemoryRegion mr,
                  final int slotBytes, final int slots, final UdGroups.Group group) {
        this.endpoint = endpoint;
        this.poolIndex = poolIndex;
        this.topic = topic;
        this.route = route;
        this.mr = mr;
        this.slotBytes = slotBytes;
        this.slots = slots;
        this.group = group;
        this.maxFrame = slotBytes - Wire.ENVELOPE_BYTES;
        this.view = new UnsafeBuffer(mr.address(), (int) mr.sizeBytes());
        this.refs = new AtomicIntegerArray(slots);
        this.requests = new SendRequestList(targets.length);
        this.retention = endpoint.config.recovers(topic.name()) ? new UdRetention(endpoint.config.recoveryFrames(), maxFrame) : null;
    }

    @Override
    public int tryClaim(final int frameLength) {
        if (closed || endpoint.isClosed()) {
            return TransportStatus.CLOSED;
        }
        if (claimed) {
            abort(); // an earlier claim never committed (it opens the gate: before entering again)
        }
        gate.enter();
        final int status = closed ? TransportStatus.CLOSED : claim(frameLength); // closed again: close() may have raced us
        if (status != TransportStatus.OK) {
            gate.leave();
        }
        return status;
    }

    private int claim(final int frameLength) {
        if (frameLength > maxFrame || frameLength < 0) {
            return TransportStatus.FRAME_TOO_LARGE;
        }
        final Connection[] subs = route.subscribers();
        if (!anyLive(subs)) {
            return TransportStatus.NOT_CONNECTED;
        }
        if (refs.get(cursor) != 0) {
            return TransportStatus.BACK_PRESSURED;
        }
        int n;
        if (group != null) {
            n = 1;
        } else {
            endpoint.posters.incrementAndGet(); // before reading handles: see UdEndpoint.onPollerDuty
            n = 0;
            for (Connection c : subs) {
                if (!c.live()) {
                    continue;
                }
                final UdEndpoint.UdRemote r = endpoint.remote(c);
                if (r != null && n < targets.length) {
                    targets[n++] = r;
                } else {
                    skippedNoAddress++;
                }
            }
            if (n == 0) {
                endpoint.posters.decrementAndGet();
                return TransportStatus.NOT_CONNECTED; // live subscribers, none reachable over UD (another bus identity)
            }
            holdingRemotes = true;
        }
        if (endpoint.outstanding.addAndGet(n) > UdEndpoint.SEND_QUEUE_DEPTH) {
            endpoint.outstanding.addAndGet(-n);
            release();
            return TransportStatus.BACK_PRESSURED;
        }
        targetCount = n;
        claimed = true;
        claimLength = frameLength;
        return TransportStatus.OK;
    }

    private static boolean anyLive(final Connection[] subs) {
        for (Connection c : subs) {
            if (c.live()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public FrameClaim claim() {
        return this;
    }

    @Override
    public MutableDirectBuffer buffer() {
        return view;
    }

    @Override
    public int offset() {
        return cursor * slotBytes + Wire.ENVELOPE_BYTES;
    }

    @Override
    public int length() {
        return claimLength;
    }

    @Override
    public void commit() {
        if (!claimed) {
            return;
        }
        claimed = false;
        final int slot = cursor;
        final int base = slot * slotBytes;
        view.putInt(base + Wire.TYPE_OFFSET, Wire.DATA, ByteOrder.LITTLE_ENDIAN);
        view.putInt(base + Wire.ARG_OFFSET, topic.topicId(), ByteOrder.LITTLE_ENDIAN);
        cursor = slot + 1 == slots ? 0 : slot + 1;
        if (retention != null) {
            retention.record(view, base + Wire.ENVELOPE_BYTES, claimLength); // gap recovery: a copy for NAKs
        }
        final int bytes = Wire.ENVELOPE_BYTES + claimLength;
        // inline: the provider copies the datagram into the work request at post time, so the slot is free again at once
        final boolean inline = bytes <= endpoint.maxInlineBytes;
        if (!inline) {
            refs.set(slot, targetCount); // the device reads the slot: each datagram holds it until its release
        }
        requests.clear();
        if (group != null) {
            add(base, bytes, inline, group.ah, UdEndpoint.MULTICAST_QPN);
        } else {
            for (int i = 0; i < targetCount; i++) {
                add(base, bytes, inline, targets[i].ah(), targets[i].qpn());
            }
        }
        final int posted = requests.count() == 0 ? 0 : endpoint.sendRing.post(endpoint.poster, requests, poolIndex, slot, !inline);
        requests.clear();
        sent += posted;
        final int lost = targetCount - posted; // not posted: a closed handle, or the device refused (bad_wr and after)
        if (lost > 0) {
            postFailures += lost;
            if (!inline) {
                refs.addAndGet(slot, -lost);
            }
            endpoint.outstanding.addAndGet(-lost);
        }
        release();
        gate.leave();
    }

    /** Adds one datagram to {@code ah}; leaves it out if the handle closed under us (peer left, transport closing). */
    private void add(final int base, final int bytes, final boolean inline, final AddressHandle ah, final int qpn) {
        final int before = requests.count();
        try {
            requests.addSend(0, mr, base, bytes, false, inline); // UdSendRing.post sets the wr_id and the signalling
            requests.toUd(ah, qpn, endpoint.qkey);
        } catch (RuntimeException e) {
            if (requests.count() > before) {
                requests.removeLast(); // counted as a post failure by commit (targetCount - posted)
            }
        }
    }

    /** Lets go of the peers' address handles read by {@link #tryClaim}. */
    private void release() {
        for (int i = 0; i < targetCount; i++) {
            targets[i] = null;
        }
        targetCount = 0;
        if (holdingRemotes) {
            holdingRemotes = false;
            endpoint.posters.decrementAndGet();
        }
    }

    @Override
    public void abort() {
        if (claimed) {
            claimed = false;
            endpoint.outstanding.addAndGet(-targetCount);
            release();
        }
        gate.leave();
    }

    @Override
    public int maxFrameLength() {
        return maxFrame;
    }

    @Override
    public boolean isConnected() {
        return anyLive(route.subscribers());
    }

    /** Completion of one datagram from {@code slot} (poller thread). */
    void onSendComplete(final int slot) {
        if (slot >= 0 && slot < slots) {
            refs.decrementAndGet(slot);
        }
    }

    /** @return the topic id of this publication */
    int topicId() {
        return topic.topicId();
    }

    /** @return the frames retained for NAKs, or null when gap recovery is off */
    UdRetention retention() {
        return retention;
    }

    /** @return datagrams posted */
    long sent() {
        return sent;
    }

    /** @return datagrams that could not be posted (lost) */
    long postFailures() {
        return postFailures;
    }

    /** @return frames not sent to a live subscriber because it announced no usable UD address */
    long skippedNoAddress() {
        return skippedNoAddress;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (gate.heldByCurrentThread()) {
            abort(); // only the claiming thread may: the claim's fields are its own
        }
        // Linger: posted datagrams read the slots' memory until they complete.
        final long deadline = System.nanoTime() + LINGER_NS;
        while (busySlots() > 0 && System.nanoTime() < deadline && !endpoint.isClosed()) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        endpoint.removePublication(this);
        if (!gate.awaitOpen(deadline, this, TimeUnit.NANOSECONDS.toMillis(LINGER_NS), mr.sizeBytes())) {
            return;
        }
        requests.close();
        mr.close();
    }

    /** @return slots whose datagrams still read them (send in flight; tests) */
    int busySlots() {
        int n = 0;
        for (int i = 0; i < slots; i++) {
            n += refs.get(i) != 0 ? 1 : 0;
        }
        return n;
    }

    @Override
    public String toString() {
        return "rdma UD publication of " + topic.name() + (group != null ? " to group " + UdConfig.ipv4Text(group.address) : " (unicast)");
    }
}
