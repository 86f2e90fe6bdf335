package io.rdmabus.rdma.transport;

import io.rdmabus.rdma.transport.ConnectionManager.DialTarget;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

import org.agrona.collections.Long2ObjectHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Discovery over the UD control group ({@code rdma.discovery=multicast}): multicasts this node's advert (listen endpoint,
 * published topics) every interval, or soon after a new publication; verifies the adverts the poller hands over; makes the
 * {@link ConnectionManager} dial an advertiser that publishes a topic this node subscribes (see {@link Advert},
 * {@link DiscoveryTable}).
 *
 * <p>Owner: the cm agent's thread, which runs {@link #onDuty} every duty cycle and {@link #onSubscribed} as a command;
 * application threads only set {@link #advertSoon} ({@link #requestAdvert}).
 */
final class Discovery {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaTransport.class);
    /** The least time between two adverts of a node (a burst of new publications is one advert). */
    private static final long MIN_ADVERT_GAP_NS = TimeUnit.MILLISECONDS.toNanos(100);

    private final RdmaContext ctx;
    private final RdmaTransportConfig config;
    /** The bus secret's bytes (the adverts' MAC), or null without one. */
    private final byte[] secretKey;
    /** Whether this node subscribes a topic (any thread may ask: the SPI face's concurrent map). */
    private final IntPredicate subscribedTopics;
    /** Discovered targets by the advertiser's node id. */
    private final Long2ObjectHashMap<DialTarget> discovered = new Long2ObjectHashMap<>();
    private final DiscoveryTable advertisers;
    private final long advertIntervalNs;
    private final int[] decodeResult = new int[1];
    private ConnectionManager manager;
    private long nextAdvertNs;
    private long lastAdvertNs;
    private long lastAdvertRejectLogNs = System.nanoTime() - PeerRefusals.LOG_INTERVAL_NS;
    private boolean topicsOmittedLogged;
    /** A publication was added: advertise at once instead of at the next interval (volatile: set by application threads). */
    private volatile boolean advertSoon;

    Discovery(final RdmaContext ctx, final IntPredicate subscribedTopics) {
        this.ctx = ctx;
        this.config = ctx.config;
        this.secretKey = AuthConfig.keyOrNull(config.auth());
        this.subscribedTopics = subscribedTopics;
        this.advertisers = new DiscoveryTable(TimeUnit.MILLISECONDS.toNanos(config.discovery().intervalMs() * DiscoveryConfig.EXPIRY_INTERVALS));
        this.advertIntervalNs = TimeUnit.MILLISECONDS.toNanos(config.discovery().intervalMs());
    }

    /** cm thread, at the agent's start: the first advert at once. */
    void onStart(final ConnectionManager connectionManager) {
        this.manager = connectionManager;
        nextAdvertNs = System.nanoTime();
        lastAdvertNs = nextAdvertNs - MIN_ADVERT_GAP_NS;
    }

    /** A publication was added (any thread): subscribers need not wait a whole interval to hear of it. */
    void requestAdvert() {
        advertSoon = true;
    }

    /** Verifies received adverts, advertises every interval (or at once after a new publication), forgets the silent. */
    int onDuty() {
        int work = 0;
        byte[] datagram;
        while ((datagram = ctx.ud.adverts().poll()) != null) {
            onAdvert(datagram);
            work++;
        }
        long now = System.nanoTime();
        // a new publication advertises at once, but a burst of them at most every MIN_ADVERT_GAP_NS
        if (now - nextAdvertNs >= 0 || advertSoon && now - lastAdvertNs >= MIN_ADVERT_GAP_NS) {
            advertSoon = false;
            lastAdvertNs = now;
            nextAdvertNs = now + advertIntervalNs;
            sendAdverts();
            List<DiscoveryTable.Advertiser> expired = advertisers.expire(now);
            ctx.counters.set(RdmaCounter.DISCOVERED_PEERS, advertisers.size());
            for (DiscoveryTable.Advertiser gone : expired) {
                if (forget(gone.nodeId) != null) {
                    LOG.info("rdma transport of bus '{}': discovered node {} at {} not heard for {} intervals of {} ms: no more dials to it{}",
                            ctx.busName, Long.toHexString(gone.nodeId), gone.endpoint(), DiscoveryConfig.EXPIRY_INTERVALS,
                            config.discovery().intervalMs(), manager.connectedTo(gone.nodeId) ? " (its live connection stays)" : "");
                }
            }
            work++;
        }
        return work;
    }

    /** One received advert (a copy the poller took): verify, record, dial its node if it publishes what we subscribe. */
    private void onAdvert(final byte[] datagram) {
        Advert.Decoded a = Advert.decode(datagram, datagram.length, secretKey, config.ud().domain(), decodeResult);
        if (a == null) {
            if (decodeResult[0] == Advert.REJECTED) {
                ctx.counters.increment(RdmaCounter.ADVERTS_REJECTED);
                long now = System.nanoTime();
                if (now - lastAdvertRejectLogNs >= PeerRefusals.LOG_INTERVAL_NS) {
                    lastAdvertRejectLogNs = now;
                    LOG.warn("rdma transport of bus '{}': dropped a discovery advert without a valid bus-secret MAC ({} in all): a node on the "
                            + "fabric has another {} or none", ctx.busName, ctx.counters.get(RdmaCounter.ADVERTS_REJECTED), AuthConfig.SECRET_FILE);
                }
            } else {
                ctx.counters.increment(RdmaCounter.ADVERTS_MALFORMED);
            }
            return;
        }
        if (a.nodeId() == ctx.nodeId) {
            return; // our own, looped back (the poller drops most of them already)
        }
        ctx.counters.increment(RdmaCounter.ADVERTS_RECEIVED);
        DiscoveryTable.Advertiser e = advertisers.onAdvert(a, System.nanoTime());
        ctx.counters.set(RdmaCounter.DISCOVERED_PEERS, advertisers.size());
        if (e == null) {
            ctx.counters.increment(RdmaCounter.ADVERTS_DROPPED); // the table is full
            return;
        }
        boolean wanted = e.publishesAny(subscribedTopics);
        DialTarget t = discovered.get(e.nodeId);
        if (wanted && t == null) {
            want(e);
        } else if (!wanted && t != null && e.pages.length == 1) {
            // nothing here subscribes what it publishes any more: stop (re)dialling it; a live connection stays.
            // (With several pages one page alone cannot tell, so such a target stays until it expires.)
            forget(e.nodeId);
        }
    }

    /** Stops (re)dialling a discovered advertiser; a live connection to it stays. @return its target, or null */
    private DialTarget forget(final long advertiserNodeId) {
        DialTarget t = discovered.remove(advertiserNodeId);
        if (t != null) {
            manager.removeTarget(t);
        }
        return t;
    }

    /** A local subscription to {@code topicId} was added: dial the advertisers of that topic we have no target for. */
    void onSubscribed(final int topicId) {
        for (DiscoveryTable.Advertiser e : advertisers.publishersOf(topicId)) {
            if (!discovered.containsKey(e.nodeId)) {
                want(e);
            }
        }
    }

    private void want(final DiscoveryTable.Advertiser e) {
        InetSocketAddress endpoint = new InetSocketAddress(UdGroups.inet(e.ipv4), e.port);
        if (manager.seedDials(endpoint)) {
            return; // a seed already dials it, for ever
        }
        DialTarget t = new DialTarget(endpoint, e.nodeId);
        discovered.put(e.nodeId, t);
        manager.addTarget(t);
        LOG.info("rdma transport of bus '{}': discovered node {} at {} publishing topics this node subscribes{}", ctx.busName,
                Long.toHexString(e.nodeId), e.endpoint(), manager.connectedTo(e.nodeId) ? " (already connected)" : "; dialling it");
    }

    /** Multicasts this node's advert: its endpoint and published topics, in pages of what one datagram holds. */
    private void sendAdverts() {
        TreeSet<Integer> topics = new TreeSet<>();
        ctx.publications.publishedTopics(topics);
        ctx.ud.addPublishedTopics(topics);
        int[] ids = topics.stream().mapToInt(Integer::intValue).toArray();
        int perPage = Advert.maxTopicsPerAdvert(config.udPayloadBytes());
        int pages = Math.max(1, (ids.length + perPage - 1) / perPage);
        if (pages > Advert.MAX_PAGES) {
            long omitted = ids.length - (long) Advert.MAX_PAGES * perPage;
            ctx.counters.set(RdmaCounter.ADVERT_TOPICS_OMITTED, omitted);
            pages = Advert.MAX_PAGES;
            if (!topicsOmittedLogged) {
                topicsOmittedLogged = true;
                LOG.warn("rdma transport of bus '{}': publishes {} topics, discovery adverts carry at most {} ({} pages of {}): {} are not "
                        + "advertised, so their subscribers need a seed list", ctx.busName, ids.length, Advert.MAX_PAGES * perPage,
                        Advert.MAX_PAGES, perPage, omitted);
            }
        } else {
            ctx.counters.set(RdmaCounter.ADVERT_TOPICS_OMITTED, 0);
        }
        ByteBuffer out = ByteBuffer.allocate(config.udPayloadBytes());
        int ipv4 = UdConfig.ipv4(ctx.device.bindIp);
        for (int page = 0; page < pages; page++) {
            int from = page * perPage;
            int count = Math.max(0, Math.min(perPage, ids.length - from));
            int length = Advert.encode(out, ctx.nodeId, ipv4, ctx.device.listenPort, page, pages, ids, from, count, secretKey, config.ud().domain());
            if (ctx.ud.sendAdvert(page, out.array(), length)) {
                ctx.counters.increment(RdmaCounter.ADVERTS_SENT);
            }
        }
    }
}
