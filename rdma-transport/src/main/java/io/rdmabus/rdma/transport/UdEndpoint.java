package io.rdmabus.rdma.transport;

import io.rdmabus.TransportException;
import io.rdmabus.rdma.verbs.Access;
import io.rdmabus.rdma.verbs.AddressHandle;
import io.rdmabus.rdma.verbs.CmEventChannel;
import io.rdmabus.rdma.verbs.CmId;
import io.rdmabus.rdma.verbs.CompletionQueue;
import io.rdmabus.rdma.verbs.MemoryRegion;
import io.rdmabus.rdma.verbs.ProtectionDomain;
import io.rdmabus.rdma.verbs.QpType;
import io.rdmabus.rdma.verbs.QueuePair;
import io.rdmabus.rdma.verbs.QueuePairSpec;
import io.rdmabus.rdma.verbs.RecvRequestList;
import io.rdmabus.rdma.verbs.UdPeer;
import io.rdmabus.rdma.verbs.VerbsException;
import io.rdmabus.rdma.verbs.WorkCompletions;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportPublication;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;

import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.OneToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;

import static io.rdmabus.rdma.transport.DeviceResources.closeQuietly;

/**
 * The best-effort UD path of one transport: one UD queue pair (created through an rdma_cm id in the UDP port space,
 * so multicast joins attach it), a registered pool of receive buffers that are all pre-posted and re-posted after each
 * delivery (one post list per poll batch), per-peer address handles (unicast mode) and per-topic multicast groups
 * (multicast mode).
 *
 * <p>The QP's Q_Key is derived from the bus identity ({@link UdConfig#qkey()}), and from the bus secret when there is
 * one ({@link UdConfig#qkey(byte[])}): the device drops datagrams carrying another key, so two buses on one fabric do
 * not see each other's frames, and a node without the secret gets none even from a multicast group it joined.
 *
 * <p>Threads: completions (send and receive) arrive on the transport's shared CQ and are handed here by its poller
 * ({@link #onCompletion}); peer addresses arrive the same way ({@link #onPeerInfo}). Publications post from the
 * publisher's thread. Joins and leaves run on the caller's thread (control path), serialised by {@link UdGroups}.
 *
 * <p>Discovery ({@code rdma.discovery=multicast}): the QP also joins the bus's control group; the cm agent posts
 * ADVERT datagrams to it ({@link #sendAdvert}), and the poller hands received ones, copied, to the cm agent through a
 * small bounded queue ({@link #adverts}) without looking further than the envelope and the node id.
 */
final class UdEndpoint implements AutoCloseable {
    /** The Global Routing Header in front of every received UD payload. */
    static final int GRH_BYTES = 40;
    /** The QP number that addresses a multicast group. */
    static final int MULTICAST_QPN = 0xFFFFFF;
    /** Where the IPv4 source address sits in the GRH area of a RoCEv2-over-IPv4 receive. */
    private static final int GRH_IPV4_SOURCE_OFFSET = 20 + 12;
    private static final int TABLE = 4096;
    static final int SEND_QUEUE_DEPTH = 1024;
    /** Inline send size asked for at QP creation: datagrams up to what the device grants are copied at post time. */
    static final int INLINE_BYTES = 256;
    /** Receive buffers re-posted with one {@code ibv_post_recv} at most. */
    static final int REPOST_LIST = 64;
    /**
     * Freed receive buffers wait until this many are queued before a re-post (fewer for a pool below 8 times that,
     * see {@link #repostBatch}): one downcall per datagram cost a fifth of the subscriber's poller samples under TCG.
     */
    static final int REPOST_BATCH = 16;

    final UdConfig config;
    final int payloadBytes;
    final int qkey;
    final boolean multicast;
    final QueuePair qp;
    /** {@code qp::postSend}, made once: what {@link UdSendRing#post} posts data frames through. */
    final UdSendRing.Poster poster;
    final int qpn;
    final int ipv4;
    private final int sgidIndex;
    private final int port;
    private final ProtectionDomain pd;
    private final Consumer<Throwable> errors;
    private final CmEventChannel channel;
    private final CmId dataId;
    private final CmId sendId;
    private final MemoryRegion recvMr;
    private final UnsafeBuffer recvView;
    /**
     * Receive buffers freed during the current poll batch, re-posted together by one {@code ibv_post_recv} over this
     * preallocated off-heap list ({@link #flushReposts}); the poller thread owns it (the start thread pre-posts through
     * it before the poller runs).
     */
    private final RecvRequestList reposts = new RecvRequestList(REPOST_LIST);
    /** Buffers {@link #flushReposts} waits for: at most an eighth of the pool is ever held back from the device. */
    private final int repostBatch;
    /** Largest datagram posted inline: the {@code max_inline_data} the device granted the QP (0: none). */
    final int maxInlineBytes;
    private final int recvStride;
    private final int recvSlots;
    private final int sendSlots;
    /** Posted UD sends not completed yet: bounded by the send queue depth. */
    final AtomicInteger outstanding = new AtomicInteger();
    /** Publishers between reading a peer's address handle and their last post with it (see {@link #onPollerDuty}). */
    final AtomicInteger posters = new AtomicInteger();
    private final AtomicReferenceArray<UdRemote> remotes = new AtomicReferenceArray<>(TABLE);
    private final AtomicReferenceArray<UdPublication> pools = new AtomicReferenceArray<>(TABLE);
    /** The data sends in flight by post sequence: posts and their release (publishers and the poller, its monitor). */
    final UdSendRing sendRing = new UdSendRing(SEND_QUEUE_DEPTH, pools, outstanding);
    private final AtomicInteger nextPool = new AtomicInteger();
    private final List<UdPublication> publications = new ArrayList<>();
    /** The send counts of the publications closed so far (guarded by {@link #publications}). */
    private final UdSendCounts closedTotals = new UdSendCounts();
    private final List<UdRemote> retired = new ArrayList<>();
    /** The multicast groups joined (null until the constructor created the ids). */
    private final UdGroups groups;
    private volatile boolean closed;

    /** Gap recovery (rdma.ud.recovery.frames above 0), subscriber side; null when off. Poller. */
    final UdRecoveryReceiver recoveryReceiver;
    /** Gap recovery, publisher side: serves NAKs from the publications' retention; null when off. Poller. */
    final UdRecoveryServer recoveryServer;
    /** The recovery server's staging slots (registered, no access flags); null when recovery is off. */
    private final MemoryRegion stagingMr;

    /** Discovery's adverts on the control group; null unless it was joined (written once, before the agents start). */
    private UdAdverts adverts;

    // counters (written by the poller only)
    private volatile long datagrams;
    private volatile long delivered;
    private volatile long malformed;
    private volatile long unknownTopic;
    private volatile long ownLoopback;
    private volatile long sinkDropped;
    private volatile long receiveErrors;
    private volatile long foreignPeers;

    /** A peer's unicast UD address (its QP and an address handle to its GID), for one RC connection. */
    record UdRemote(int connectionId, AddressHandle ah, int qpn, int qkey) {
    }

    private UdEndpoint(final UdConfig config, final int qkey, final int payloadBytes, final int sendSlots, final ProtectionDomain pd,
                       final CompletionQueue cq, final String bindIp, final Consumer<Throwable> errors, final boolean withSendId) {
        this.config = config;
        this.payloadBytes = payloadBytes;
        this.sendSlots = sendSlots;
        this.qkey = qkey;
        this.multicast = config.mode() == UdConfig.Mode.MULTICAST;
        this.pd = pd;
        this.errors = errors;
        this.recvSlots = config.recvBuffers();
        this.repostBatch = Math.max(1, Math.min(REPOST_BATCH, recvSlots / 8));
        this.recvStride = align64(GRH_BYTES + payloadBytes);
        this.ipv4 = UdConfig.ipv4(bindIp);
        CmEventChannel ch = null;
        CmId data = null;
        CmId send = null;
        QueuePair q = null;
        MemoryRegion mr = null;
        MemoryRegion stage = null;
        try {
            ch = new CmEventChannel();
            data = CmId.create(ch, CmId.PortSpace.UDP);
            data.bind(new InetSocketAddress(InetAddress.getByName(bindIp), 0));
            try {
                q = data.createQueuePair(pd, cq, cq, new QueuePairSpec(QpType.UD, SEND_QUEUE_DEPTH, recvSlots, INLINE_BYTES));
            } catch (VerbsException e) {
                // a device without inline sends: every datagram reads its registered slot
                q = data.createQueuePair(pd, cq, cq, new QueuePairSpec(QpType.UD, SEND_QUEUE_DEPTH, recvSlots, 0));
            }
            if (q.maxUdPayloadBytes() < payloadBytes) {
                throw new TransportException("The path MTU of " + bindIp + " is " + q.maxUdPayloadBytes() + " bytes, below "
                        + RdmaTransportConfig.UD_PAYLOAD_BYTES + " = " + payloadBytes + ": set it to " + q.maxUdPayloadBytes());
            }
            q.setUdQkey(qkey);
            this.port = data.portNumber();
            this.sgidIndex = pd.context().findGidIndex(port, UdPeer.ipv4Gid(ipv4));
            if (sgidIndex < 0) {
                throw new TransportException("No RoCEv2 GID ::ffff:" + bindIp + " on port " + port + ": check " + RdmaTransportConfig.BIND);
            }
            if (multicast || withSendId) {
                send = CmId.create(ch, CmId.PortSpace.UDP);
                send.bind(new InetSocketAddress(InetAddress.getByName(bindIp), 0));
            }
            mr = pd.registerMemory((long) recvStride * recvSlots, Access.LOCAL_WRITE);
            if (config.recovery()) {
                stage = pd.registerMemory((long) UdRecoveryServer.STAGING_SLOTS * payloadBytes, Access.NONE);
            }
        } catch (UnknownHostException | RuntimeException e) {
            closeQuietly(stage);
            closeQuietly(mr);
            closeQuietly(q);
            closeQuietly(send);
            closeQuietly(data);
            closeQuietly(ch);
            reposts.close();
            if (e instanceof TransportException te) {
                throw te;
            }
            throw new TransportException("Cannot set up the rdma UD endpoint on " + bindIp + ": " + e.getMessage(), e);
        }
        this.channel = ch;
        this.dataId = data;
        this.sendId = send;
        this.groups = new UdGroups(data, send, pd);
        this.qp = q;
        this.poster = q::postSend;
        this.qpn = q.qpNumber();
        this.maxInlineBytes = q.maxInlineBytes();
        this.recvMr = mr;
        this.recvView = new UnsafeBuffer(mr.address(), (int) mr.sizeBytes());
        this.stagingMr = stage;
        if (stage != null) {
            this.recoveryServer = new UdRecoveryServer(stage, payloadBytes, this::retentionOf);
            this.recoveryReceiver = new UdRecoveryReceiver(config.recoveryFrames(), config.recoveryMs() * 1_000_000L, maxFrameBytes(), this::offer);
        } else {
            this.recoveryServer = null;
            this.recoveryReceiver = null;
        }
    }

    /**
     * Creates the UD QP on {@code bindIp}'s device, sets the bus Q_Key and pre-posts every receive buffer.
     *
     * @param payloadBytes the datagram payload bound ({@code rdma.ud.payload.bytes}), checked against the port's active MTU
     * @param sendSlots    send slots per publication
     * @param withSendId   also create the join-only id in unicast mode (discovery sends to its control group through it)
     */
    static UdEndpoint open(final UdConfig config, final int qkey, final int payloadBytes, final int sendSlots, final ProtectionDomain pd,
                           final CompletionQueue cq, final String bindIp, final Consumer<Throwable> errors, final boolean withSendId) {
        UdEndpoint e = new UdEndpoint(config, qkey, payloadBytes, sendSlots, pd, cq, bindIp, errors, withSendId);
        try {
            for (int s = 0; s < e.recvSlots; s++) {
                e.reposts.add(recvWrId(s), e.recvMr, (long) s * e.recvStride, e.recvStride);
                if (e.reposts.isFull() || s == e.recvSlots - 1) {
                    int rc = e.qp.postRecv(e.reposts);
                    e.reposts.clear();
                    if (rc != 0) {
                        throw new VerbsException("ibv_post_recv", rc);
                    }
                }
            }
        } catch (RuntimeException ex) {
            e.close();
            throw new TransportException("Cannot pre-post the rdma UD receive buffers: " + ex.getMessage(), ex);
        }
        return e;
    }

    private static int align64(final int n) {
        return (n + 63) & ~63;
    }

    static long recvWrId(final int slot) {
        return WorkRequestId.of(0, WorkRequestId.KIND_UD_RECV, 0, slot);
    }

    /** @return the largest best-effort frame: one datagram minus the envelope */
    int maxFrameBytes() {
        return payloadBytes - Wire.ENVELOPE_BYTES;
    }

    // ------------------------------------------------------------------------------------------------ publications

    /** A BEST_EFFORT publication over UD (unicast fan-out or the topic's multicast group). */
    TransportPublication addPublication(final TopicDescriptor topic, final TopicRoute route) {
        if (closed) {
            throw new TransportException("the rdma transport is closed");
        }
        UdGroups.Group group = multicast ? groups.joinForSending(config.groupOf(topic.name())) : null;
        MemoryRegion mr = null;
        try {
            mr = pd.registerMemory((long) payloadBytes * sendSlots, Access.NONE);
            int index = -1;
            for (int i = 0; i < TABLE && index < 0; i++) {
                int candidate = nextPool.getAndIncrement() & (TABLE - 1);
                if (pools.get(candidate) == null) {
                    index = candidate;
                }
            }
            if (index < 0) {
                throw new TransportException("Too many rdma UD publications open (" + TABLE + ")");
            }
            UdPublication pub = new UdPublication(this, index, topic, route, mr, payloadBytes, sendSlots, group);
            pools.set(index, pub);
            synchronized (publications) {
                publications.add(pub);
            }
            return pub;
        } catch (RuntimeException e) {
            closeQuietly(mr);
            if (group != null) {
                groups.releaseGroup(group);
            }
            throw e;
        }
    }

    /**
     * @param count one of the publications' send counts ({@link UdSendCounts#sent}, {@link UdSendCounts#posts},
     *              {@link UdSendCounts#postFailures})
     * @return that count summed over the open publications and those closed before (any thread; each publisher writes
     *     its own, so a read may miss its latest post)
     */
    long publicationTotal(final java.util.function.ToLongFunction<UdSendCounts> count) {
        synchronized (publications) {
            long total = count.applyAsLong(closedTotals);
            for (int i = 0; i < publications.size(); i++) {
                total += count.applyAsLong(publications.get(i).counts());
            }
            return total;
        }
    }

    /** Adds the topic ids of the open UD publications to {@code out} (discovery adverts; cm thread). */
    void addPublishedTopics(final java.util.Set<Integer> out) {
        synchronized (publications) {
            for (UdPublication p : publications) {
                out.add(p.topicId());
            }
        }
    }

    /** @return the retention of this node's UD publication of {@code topicId}, or null (poller, serving a NAK) */
    private UdRetention retentionOf(final int topicId) {
        synchronized (publications) {
            for (int i = 0; i < publications.size(); i++) {
                final UdPublication p = publications.get(i);
                if (p.topicId() == topicId && p.retention() != null) {
                    return p.retention();
                }
            }
        }
        return null;
    }

    void removePublication(final UdPublication pub) {
        pools.compareAndSet(pub.poolIndex, pub, null);
        synchronized (publications) {
            if (publications.remove(pub)) {
                closedTotals.add(pub.counts());
            }
        }
        if (pub.group != null) {
            groups.releaseGroup(pub.group);
        }
    }

    /** Closes every open UD publication (transport close, before the poller stops: they linger for completions). */
    void closePublications() {
        List<UdPublication> copy;
        synchronized (publications) {
            copy = new ArrayList<>(publications);
        }
        for (UdPublication p : copy) {
            p.close();
        }
    }

    /** @return the unicast address of the peer at the other end of {@code c}, or null (any thread) */
    UdRemote remote(final Connection c) {
        UdRemote r = remotes.get(c.id & (TABLE - 1));
        return r != null && r.connectionId() == c.id ? r : null;
    }

    boolean isClosed() {
        return closed;
    }

    // ------------------------------------------------------------------------------------------------ multicast

    /**
     * Multicast mode: attaches the UD QP to the topic's group (first local subscription of the topic), so that frames
     * sent to the group arrive here. Unicast mode: nothing (publishers address this QP directly). Caller's thread.
     */
    synchronized void subscribe(final TopicDescriptor topic) {
        if (!multicast || closed) {
            return;
        }
        groups.joinForReceiving(config.groupOf(topic.name()));
    }

    /** Undoes {@link #subscribe}: the last local subscription of the group leaves it. */
    synchronized void unsubscribe(final TopicDescriptor topic) {
        if (!multicast || closed) {
            return;
        }
        groups.leaveForReceiving(config.groupOf(topic.name()));
    }

    // ------------------------------------------------------------------------------------------------ discovery

    /**
     * Discovery: attaches the QP to the control group (receive) and joins it for sending (the group's address handle),
     * and registers one send slot per advert page. Start thread, before the agents run.
     *
     * @param address the control group (big-endian IPv4)
     * @param ownNodeId this transport's node id: its own adverts looped back by the device are dropped by the poller
     * @throws TransportException if the fabric refuses the joins (no multicast)
     */
    synchronized void joinControlGroup(final int address, final long ownNodeId) {
        if (sendId == null) {
            throw new IllegalStateException("opened without the join-only id");
        }
        boolean receiving = false;
        UdGroups.Group controlGroup = null;
        MemoryRegion advertMr = null;
        try {
            groups.joinForReceiving(address);
            receiving = true;
            controlGroup = groups.joinForSending(address);
            advertMr = pd.registerMemory((long) payloadBytes * Advert.MAX_PAGES, Access.NONE);
            adverts = new UdAdverts(this, ownNodeId, controlGroup, advertMr);
        } catch (RuntimeException e) {
            if (controlGroup != null) {
                groups.releaseGroup(controlGroup);
            }
            if (receiving) {
                groups.leaveForReceiving(address);
            }
            closeQuietly(advertMr);
            throw new TransportException("Cannot join the rdma discovery control group " + UdConfig.ipv4Text(address) + " ("
                    + DiscoveryConfig.MODE + "=multicast): " + e.getMessage() + "; where the fabric has no multicast, use "
                    + DiscoveryConfig.MODE + "=seeds with a seed list", e);
        }
    }

    /** @return received ADVERT datagrams (copies) for the cm agent, or null without discovery */
    OneToOneConcurrentArrayQueue<byte[]> adverts() {
        return adverts == null ? null : adverts.received();
    }

    /**
     * Posts one advert page to the control group (cm thread); see {@link UdAdverts#send}.
     *
     * @return true if posted
     */
    boolean sendAdvert(final int page, final byte[] datagram, final int length) {
        return adverts != null && adverts.send(page, datagram, length);
    }

    /** @return received adverts dropped because the cm agent's queue was full */
    long advertsDropped() {
        return adverts == null ? 0 : adverts.dropped();
    }

    // ------------------------------------------------------------------------------------------------ poller side

    /**
     * A peer announced its UD address on connection {@code c} (poller thread). Unicast mode creates an address handle
     * to it; a peer whose Q_Key differs belongs to another bus identity and is never sent datagrams.
     *
     * @param peerQpn  the peer's UD QP number
     * @param peerIpv4 the peer's IPv4 address (its RoCEv2 GID is {@code ::ffff:ip})
     * @param peerQkey the Q_Key its QP accepts
     */
    void onPeerInfo(final Connection c, final int peerQpn, final int peerIpv4, final int peerQkey) {
        if (peerQkey != qkey) {
            foreignPeers++;
            errors.accept(new TransportException(c + ": the peer's UD Q_Key 0x" + Integer.toHexString(peerQkey) + " is not this bus's (0x"
                    + Integer.toHexString(qkey) + "): another " + UdConfig.DOMAIN + "; it gets no best-effort datagrams from here"));
            return;
        }
        if (recoveryReceiver != null) {
            recoveryReceiver.onPeerInfo(c, peerQpn, peerIpv4); // gap recovery: NAKs for this peer's streams go to c
        }
        if (multicast) {
            return;
        }
        AddressHandle ah;
        try {
            ah = UdPeer.ofGid(UdPeer.ipv4Gid(peerIpv4), sgidIndex, port, peerQpn, peerQkey).createAddressHandle(pd);
        } catch (RuntimeException e) {
            errors.accept(new TransportException(c + ": no address handle to UD peer " + UdConfig.ipv4Text(peerIpv4) + " qpn " + peerQpn
                    + ": " + e.getMessage(), e));
            return;
        }
        UdRemote prev = remotes.getAndSet(c.id & (TABLE - 1), new UdRemote(c.id, ah, peerQpn, peerQkey));
        if (prev != null) {
            retired.add(prev);
        }
    }

    /** Connection {@code c} is gone: stop addressing its peer (poller thread). */
    void forget(final Connection c) {
        if (recoveryReceiver != null) {
            recoveryReceiver.forget(c);
        }
        int index = c.id & (TABLE - 1);
        UdRemote r = remotes.get(index);
        if (r != null && r.connectionId() == c.id && remotes.compareAndSet(index, r, null)) {
            retired.add(r);
        }
    }

    /**
     * Destroys address handles of departed peers once no publisher can still hold one: a publisher raises
     * {@link #posters} before reading the table and lowers it after its last post, so a zero seen after the handle left
     * the table means nobody uses it (poller thread).
     *
     * @return work done
     */
    int onPollerDuty() {
        if (retired.isEmpty() || posters.get() != 0) {
            return 0;
        }
        int n = retired.size();
        for (UdRemote r : retired) {
            closeQuietly(r.ah());
        }
        retired.clear();
        return n;
    }

    /**
     * A completion of this endpoint's QP (poller thread): a send returns its slot; a receive is delivered to the local
     * subscriptions of the envelope's topic and its buffer queued for the batch's re-post ({@link #flushReposts}).
     *
     * @param local the poller's subscriptions by topic id
     */
    void onCompletion(final WorkCompletions wcs, final int i, final int kind, final int pool, final int slot,
                      final Int2ObjectHashMap<RdmaSubscription[]> local) {
        final int status = wcs.status(i);
        if (kind == WorkRequestId.KIND_UD_ADVERT_SEND) {
            if (adverts != null) {
                adverts.onSendComplete(slot, status, errors);
            }
            return;
        }
        if (kind == WorkRequestId.KIND_UD_SEND) {
            // releases this send and the unsignalled ones before it (an error completion too: it may be unsignalled)
            sendRing.onCompletion(WorkRequestId.sequenceBits(wcs.wrId(i)));
            if (status != WorkCompletions.SUCCESS && status != WorkCompletions.WR_FLUSH_ERR && !closed) {
                errors.accept(new TransportException("rdma UD send failed: " + WorkCompletions.statusText(status)));
            }
            return;
        }
        if (slot >= recvSlots) {
            return;
        }
        if (status != WorkCompletions.SUCCESS) {
            if (!closed && status != WorkCompletions.WR_FLUSH_ERR) {
                receiveErrors++;
                repost(slot);
            }
            return;
        }
        datagrams++;
        deliver(slot, wcs.byteLength(i) - GRH_BYTES, wcs.sourceQp(i), local);
        repost(slot);
    }

    private void deliver(final int slot, final int length, final int sourceQp, final Int2ObjectHashMap<RdmaSubscription[]> local) {
        // our own datagram back from a group we also joined: same QP number AND same source address (QP numbers are
        // per device, so another host's QP may well have ours); RoCEv2 over IPv4 puts the IPv4 header in the last 20
        // bytes of the 40-byte GRH area, the source address at byte 32
        if (multicast && (sourceQp & MULTICAST_QPN) == qpn
                && recvView.getInt(slot * recvStride + GRH_IPV4_SOURCE_OFFSET, ByteOrder.BIG_ENDIAN) == ipv4) {
            ownLoopback++;
            return;
        }
        final int base = slot * recvStride + GRH_BYTES;
        if (length < Wire.ENVELOPE_BYTES || length > payloadBytes
                || recvView.getInt(base + Wire.TYPE_OFFSET, ByteOrder.LITTLE_ENDIAN) != Wire.DATA) {
            // not a DATA frame: a discovery advert (only checked here, off the data path), or malformed
            if (adverts != null && length >= Advert.HEADER_BYTES && length <= payloadBytes
                    && recvView.getInt(base + Wire.TYPE_OFFSET, ByteOrder.LITTLE_ENDIAN) == Wire.ADVERT) {
                if (!adverts.onReceived(recvView, base, length)) {
                    ownLoopback++;
                }
                return;
            }
            malformed++;
            return;
        }
        final RdmaSubscription[] subs = local.get(recvView.getInt(base + Wire.ARG_OFFSET, ByteOrder.LITTLE_ENDIAN));
        if (subs == null) {
            unknownTopic++;
            return;
        }
        final int frame = base + Wire.ENVELOPE_BYTES;
        if (recoveryReceiver != null && config.recovers(subs[0].topic.name())
                && recoveryReceiver.onDatagram(recvView.getInt(base + Wire.ARG_OFFSET, ByteOrder.LITTLE_ENDIAN), subs,
                recvView, frame, length - Wire.ENVELOPE_BYTES, UdRecoveryReceiver.addressKey(
                        recvView.getInt(slot * recvStride + GRH_IPV4_SOURCE_OFFSET, ByteOrder.BIG_ENDIAN), sourceQp), local)) {
            return; // gap recovery holds it, or delivered it in order with what it held
        }
        offer(subs, recvView, frame, length - Wire.ENVELOPE_BYTES);
    }

    /** Hands one best-effort frame to the local subscriptions of its topic (poller; also for held and recovered frames). */
    void offer(final RdmaSubscription[] subs, final DirectBuffer buffer, final int offset, final int length) {
        for (RdmaSubscription s : subs) {
            if (!s.closed && s.sink.onFrame(buffer, offset, length) == SubscriptionSink.BACK_PRESSURE) {
                sinkDropped++; // best effort: never held (the bus's best-effort sinks drop and count themselves)
            }
        }
        delivered++;
    }

    /** Queues receive buffer {@code slot} for {@link #flushReposts} (posts the list first if it is full). */
    private void repost(final int slot) {
        if (closed) {
            return;
        }
        if (reposts.isFull()) {
            flushReposts();
            if (reposts.isFull()) {
                receiveErrors++; // the device keeps refusing: this buffer is out of the pool (counted)
                return;
            }
        }
        reposts.add(recvWrId(slot), recvMr, (long) slot * recvStride, recvStride);
    }

    /**
     * Posts the receive buffers freed so far with one {@code ibv_post_recv} over the list (poller thread, after each
     * poll batch) once at least {@link #repostBatch} of them are queued; fewer wait for the next batches (so at most
     * {@code repostBatch - 1} buffers, an eighth of the pool, are off the device at a time, for as long as no more
     * datagrams arrive). If the device refuses one ({@code bad_wr}), those before it are posted, and it and the rest
     * stay queued for the next call (counted in {@link #receiveErrors}): none is posted twice or dropped.
     *
     * @return buffers posted
     */
    int flushReposts() {
        final int n = reposts.count();
        if (n < repostBatch) {
            return 0;
        }
        if (closed) {
            reposts.clear();
            return 0;
        }
        final int rc = qp.postRecv(reposts);
        if (rc == 0) {
            reposts.clear();
            return n;
        }
        receiveErrors++;
        final int failedAt = reposts.failedIndex();
        if (failedAt < 0) {
            receiveErrors += n - 1; // bad_wr names none of them: count them out rather than risk posting one twice
            reposts.clear();
            return 0;
        }
        reposts.dropFirst(failedAt);
        return failedAt;
    }

    // ------------------------------------------------------------------------------------------------ counters

    /** @return datagrams received (before any check) */
    long datagrams() {
        return datagrams;
    }

    /** @return frames handed to the local subscriptions of their topic (with gap recovery: held and recovered ones when delivered) */
    long delivered() {
        return delivered;
    }

    /** @return datagrams dropped as malformed (too short or too long, not a DATA envelope) */
    long malformed() {
        return malformed;
    }

    /** @return datagrams for a topic nobody here subscribes (e.g. a shared multicast group) */
    long unknownTopic() {
        return unknownTopic;
    }

    /** @return our own multicast datagrams looped back to us */
    long ownLoopback() {
        return ownLoopback;
    }

    /** @return frames a sink refused (dropped) */
    long sinkDropped() {
        return sinkDropped;
    }

    /** @return failed receive completions or re-posts */
    long receiveErrors() {
        return receiveErrors;
    }

    /** @return peers that announced another bus identity's Q_Key */
    long foreignPeers() {
        return foreignPeers;
    }

    /** @return this QP's address as peers see it: {@code ip qpn Q_Key} */
    @Override
    public String toString() {
        return "UD " + UdConfig.ipv4Text(ipv4) + " qpn " + qpn + " qkey 0x" + Integer.toHexString(qkey) + (multicast ? " multicast" : " unicast");
    }

    // ------------------------------------------------------------------------------------------------ close

    /** Frees everything (after the poller stopped and the publications closed): groups, handles, QP, buffers, ids. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        groups.close(); // detaches while the QP exists
        for (int i = 0; i < TABLE; i++) {
            UdRemote r = remotes.getAndSet(i, null);
            if (r != null) {
                closeQuietly(r.ah());
            }
        }
        for (UdRemote r : retired) {
            closeQuietly(r.ah());
        }
        retired.clear();
        closeQuietly(qp); // the control group's handle went with the groups
        closeQuietly(recvMr);
        if (recoveryServer != null) {
            recoveryServer.close();
        }
        closeQuietly(stagingMr);
        if (adverts != null) {
            adverts.close();
        }
        reposts.close();
        closeQuietly(sendId);
        closeQuietly(dataId);
        closeQuietly(channel);
    }
}
