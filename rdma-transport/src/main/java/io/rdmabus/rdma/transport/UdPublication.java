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
 * when the last of those sends completes. Who subscribes is known from the SUB messages on the RC control connections
 * ({@link TopicRoute}); no credits: UD never back-pressures the publisher for a slow subscriber (the subscriber's
 * receive queue drops, and the bus reports the gap from its sequence numbers).
 *
 * <p>Batches: between {@link #beginBatch} and {@link #endBatch} (the bus's batch offer) commits chain their datagrams
 * instead, and one {@code ibv_post_send} posts the chain at the end of the batch (or when it fills). On rxe a post is
 * a system call, and those calls were most of a publishing thread's time (rdma-transport.md, UD path).
 *
 * <p>{@link TransportStatus#NOT_CONNECTED} when no subscriber is known, {@link TransportStatus#BACK_PRESSURED} when
 * the slot is still in flight or the UD send queue is full.
 */
final class UdPublication implements TransportPublication, FrameClaim {
    private static final long LINGER_NS = TimeUnit.SECONDS.toNanos(2);
    /** Work requests in one post at most: a frame's datagrams (one per destination, up to 64), or a batch's frames. */
    static final int CHAIN_CAPACITY = 64;

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
     * The chain: the frame's datagrams, one per destination (and in a batch the earlier frames' too), posted with one
     * {@code ibv_post_send} ({@link UdSendRing#post}): preallocated off-heap work requests, owned by the thread holding
     * the claim or the batch ({@link ClaimGate}).
     */
    private final SendRequestList requests;
    /** Per request of the chain: its {@link UdSendRing} entry (the slot it reads at send time, or none). */
    private final long[] entries;
    /** Per frame of a batch's chain: its slot, held (one reference) until the post copies its inline datagrams. */
    private final int[] heldSlots;
    private int heldCount;
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
    /** Datagrams sent, posts made, datagrams lost before the device (this publication's thread writes them). */
    private final UdSendCounts counts = new UdSendCounts();
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
        this.requests = new SendRequestList(CHAIN_CAPACITY);
        this.entries = new long[CHAIN_CAPACITY];
        this.heldSlots = new int[CHAIN_CAPACITY];
        this.retention = endpoint.config.recovers(topic.name()) ? new UdRetention(endpoint.config.recoveryFrames(), maxFrame) : null;
    }

    @Override
    public int tryClaim(final int frameLength) {
        if (closed || endpoint.isClosed()) {
            return TransportStatus.CLOSED;
        }
        if (claimed) {
            abort(); // an earlier claim never committed (outside a batch it opens the gate: before entering again)
        }
        gate.enterClaim();
        final int status = closed ? TransportStatus.CLOSED : claim(frameLength); // closed again: close() may have raced us
        if (status != TransportStatus.OK) {
            gate.endClaim();
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
        if (refs.get(cursor) != 0 && heldCount > 0) {
            postChain(); // the slot may be one the batch holds until its post
        }
        if (refs.get(cursor) != 0) {
            return TransportStatus.BACK_PRESSURED;
        }
        int n;
        if (group != null) {
            n = 1;
        } else {
            if (!holdingRemotes) {
                holdingRemotes = true;
                endpoint.posters.incrementAndGet(); // before reading handles: see UdEndpoint.onPollerDuty
            }
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
                releaseRemotesUnlessChained();
                return TransportStatus.NOT_CONNECTED; // live subscribers, none reachable over UD (another bus identity)
            }
        }
        targetCount = n;
        if (endpoint.outstanding.addAndGet(n) > UdEndpoint.SEND_QUEUE_DEPTH) {
            endpoint.outstanding.addAndGet(-n);
            clearTargets();
            releaseRemotesUnlessChained();
            return TransportStatus.BACK_PRESSURED;
        }
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
        // inline: the provider copies the datagram into the work request at post time, so the slot is free again then
        final boolean inline = bytes <= endpoint.maxInlineBytes;
        if (requests.count() + targetCount > requests.capacity()) {
            postChain(); // a batch's chain is full (a held slot has a request in it, so heldSlots is never fuller)
        }
        final int before = requests.count();
        final long entry = inline ? UdSendRing.NO_SLOT : UdSendRing.slotEntry(poolIndex, slot);
        if (group != null) {
            add(base, bytes, inline, group.ah, UdEndpoint.MULTICAST_QPN, entry);
        } else {
            for (int i = 0; i < targetCount; i++) {
                add(base, bytes, inline, targets[i].ah(), targets[i].qpn(), entry);
            }
        }
        final int added = requests.count() - before;
        if (added > 0 && !inline) {
            refs.set(slot, added); // the device reads the slot: each datagram holds it until its release
        } else if (added > 0 && gate.inBatch()) {
            refs.set(slot, 1); // the chain's post reads the slot (copies it inline): held until then
            heldSlots[heldCount++] = slot;
        }
        lost(targetCount - added); // not added: the handle closed under us (peer left, transport closing)
        clearTargets();
        if (!gate.inBatch()) {
            postChain();
        }
        gate.endClaim();
    }

    /**
     * Posts the chain with one {@code ibv_post_send} and lets go of what it held: the slots of its inline frames and,
     * unless a frame is being added, the peers' address handles.
     */
    private void postChain() {
        final int n = requests.count();
        if (n > 0) { // else nothing is held either: a held slot's frame has a request in the chain
            final int posted = endpoint.sendRing.post(endpoint.poster, requests, entries);
            counts.posts++;
            counts.sent += posted;
            for (int i = posted; i < n; i++) { // not posted: the device refused (bad_wr and after), or the QP closed
                if (entries[i] != UdSendRing.NO_SLOT) {
                    refs.decrementAndGet((int) entries[i] & 0xFFFF);
                }
            }
            lost(n - posted);
            requests.clear();
            for (int i = 0; i < heldCount; i++) {
                refs.decrementAndGet(heldSlots[i]);
            }
            heldCount = 0;
        }
        if (targetCount == 0) {
            releaseRemotesUnlessChained(); // else a frame being committed still has its peers to add
        }
    }

    /** Datagrams that will not go out: counted, and their send queue places given back. */
    private void lost(final int datagrams) {
        if (datagrams > 0) {
            counts.postFailures += datagrams;
            endpoint.outstanding.addAndGet(-datagrams);
        }
    }

    /** Adds one datagram to {@code ah}; leaves it out if the handle closed under us (peer left, transport closing). */
    private void add(final int base, final int bytes, final boolean inline, final AddressHandle ah, final int qpn, final long entry) {
        final int before = requests.count();
        try {
            requests.addSend(0, mr, base, bytes, false, inline); // UdSendRing.post sets the wr_id and the signalling
            requests.toUd(ah, qpn, endpoint.qkey);
            entries[before] = entry;
        } catch (RuntimeException e) {
            if (requests.count() > before) {
                requests.removeLast(); // counted as lost by commit (targetCount - added)
            }
        }
    }

    /** Forgets the peers read by {@link #tryClaim} (their handles stay held while the chain has datagrams to them). */
    private void clearTargets() {
        for (int i = 0; i < targetCount; i++) {
            targets[i] = null;
        }
        targetCount = 0;
    }

    /** Lets go of the peers' address handles once no chained datagram still names one. */
    private void releaseRemotesUnlessChained() {
        if (holdingRemotes && requests.count() == 0) {
            holdingRemotes = false;
            endpoint.posters.decrementAndGet();
        }
    }

    @Override
    public void abort() {
        if (claimed) {
            claimed = false;
            endpoint.outstanding.addAndGet(-targetCount);
            clearTargets();
            releaseRemotesUnlessChained();
        }
        gate.endClaim();
    }

    /**
     * Commits until {@link #endBatch} chain their datagrams; the chain is posted when it fills, when a claim needs a
     * slot it holds, and at the end of the batch. Holds the claim gate for the whole batch, so {@link #close} on another
     * thread waits for the chain's post.
     */
    @Override
    public void beginBatch() {
        if (gate.inBatch()) {
            return;
        }
        if (claimed) {
            abort();
        }
        gate.beginBatch();
    }

    /** Posts what the batch chained (with one {@code ibv_post_send}) and opens the claim gate. */
    @Override
    public void endBatch() {
        if (!gate.inBatch()) {
            return;
        }
        if (claimed) {
            abort(); // a claim of the batch never committed
        }
        postChain();
        gate.endBatch();
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

    /** @return datagrams sent, posts made and datagrams lost before the device */
    UdSendCounts counts() {
        return counts;
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
            endBatch(); // a batch in progress: its chain is posted before the slots are lingered on
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
