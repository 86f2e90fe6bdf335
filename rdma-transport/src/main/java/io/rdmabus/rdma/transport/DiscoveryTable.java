package io.rdmabus.rdma.transport;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

import org.agrona.collections.Long2ObjectHashMap;

/**
 * The advertisers a node has heard on the discovery control group, by node id (cm thread only; pure logic, no verbs).
 * Each entry keeps the advertiser's listen endpoint, its topic list (per advert page) and when it was last heard;
 * entries not heard for {@link DiscoveryConfig#EXPIRY_INTERVALS} intervals are forgotten. Bounded: at most
 * {@link #MAX_ADVERTISERS} entries (adverts of further nodes are dropped and counted by the caller).
 */
final class DiscoveryTable {
    /** Advertisers held at most: bounds the memory a fabric full of (authenticated or, without a secret, any) nodes takes. */
    static final int MAX_ADVERTISERS = 1024;

    /** One advertising node. */
    static final class Advertiser {
        final long nodeId;
        int ipv4;
        int port;
        /** Topic ids per page of its advert; a page not heard yet is null. */
        int[][] pages;
        long lastHeardNs;

        Advertiser(final long nodeId) {
            this.nodeId = nodeId;
        }

        /** @return its listen endpoint as {@code ip:port} */
        String endpoint() {
            return UdConfig.ipv4Text(ipv4) + ":" + port;
        }

        /** @return true if it advertises at least one topic {@code subscribed} accepts */
        boolean publishesAny(final IntPredicate subscribed) {
            for (int[] page : pages) {
                if (page != null) {
                    for (int t : page) {
                        if (subscribed.test(t)) {
                            return true;
                        }
                    }
                }
            }
            return false;
        }

        /** @return true if it advertises {@code topicId} */
        boolean publishes(final int topicId) {
            return publishesAny(t -> t == topicId);
        }
    }

    private final Long2ObjectHashMap<Advertiser> byNode = new Long2ObjectHashMap<>();
    private final long expiryNs;

    /** @param expiryNs an advertiser not heard for this long is forgotten */
    DiscoveryTable(final long expiryNs) {
        this.expiryNs = expiryNs;
    }

    /**
     * Records a verified advert (not our own).
     *
     * @return the advertiser's entry, or null if the table is full and the node is new (drop the advert)
     */
    Advertiser onAdvert(final Advert.Decoded a, final long nowNs) {
        Advertiser e = byNode.get(a.nodeId());
        if (e == null) {
            if (byNode.size() >= MAX_ADVERTISERS) {
                return null;
            }
            e = new Advertiser(a.nodeId());
            byNode.put(a.nodeId(), e);
        }
        if (e.pages == null || e.pages.length != a.pages()) {
            e.pages = new int[a.pages()][]; // its topic list changed shape: start over with the pages from now on
        }
        e.pages[a.page()] = a.topics();
        e.ipv4 = a.ipv4();
        e.port = a.port();
        e.lastHeardNs = nowNs;
        return e;
    }

    /** @return the advertisers of {@code topicId} (a subscription was added) */
    List<Advertiser> publishersOf(final int topicId) {
        List<Advertiser> out = new ArrayList<>();
        for (Advertiser e : byNode.values()) {
            if (e.publishes(topicId)) {
                out.add(e);
            }
        }
        return out;
    }

    /**
     * Forgets advertisers not heard for the expiry time.
     *
     * @return the forgotten entries
     */
    List<Advertiser> expire(final long nowNs) {
        List<Advertiser> gone = new ArrayList<>();
        for (Advertiser e : byNode.values()) {
            if (nowNs - e.lastHeardNs > expiryNs) {
                gone.add(e);
            }
        }
        for (Advertiser e : gone) {
            byNode.remove(e.nodeId);
        }
        return gone;
    }

    /** @return the entry of {@code nodeId}, or null */
    Advertiser get(final long nodeId) {
        return byNode.get(nodeId);
    }

    /** @return advertisers known now */
    int size() {
        return byNode.size();
    }
}
