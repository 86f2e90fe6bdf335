package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** The advertiser table of the cm agent: who publishes what, expiry after silence, the bound (pure logic). */
class DiscoveryTableTest {
    private static final long SEC = 1_000_000_000L;
    private static final int IP = UdConfig.ipv4("10.77.0.12");

    private static Advert.Decoded advert(final long node, final int page, final int pages, final int... topics) {
        return new Advert.Decoded(node, IP, 7800, page, pages, topics);
    }

    @Test
    void recordsWhoPublishesWhatAndForgetsTheSilent() {
        DiscoveryTable t = new DiscoveryTable(5 * SEC);
        DiscoveryTable.Advertiser a = t.onAdvert(advert(1, 0, 1, 10, 11), 0);
        t.onAdvert(advert(2, 0, 1, 20), 0);
        assertEquals("10.77.0.12:7800", a.endpoint());
        assertTrue(a.publishesAny(Set.of(11, 99)::contains));
        assertFalse(a.publishesAny(Set.of(20)::contains));
        assertEquals(List.of(a), t.publishersOf(10));
        assertTrue(t.publishersOf(30).isEmpty());
        assertSame(a, t.onAdvert(advert(1, 0, 1, 12), 4 * SEC), "same node, same entry; its topic list replaced");
        assertFalse(a.publishes(10));
        assertTrue(a.publishes(12));
        assertTrue(t.expire(5 * SEC).isEmpty(), "not yet");
        List<DiscoveryTable.Advertiser> gone = t.expire(5 * SEC + 1);
        assertEquals(1, gone.size(), "node 2, silent for more than 5 s");
        assertEquals(2, gone.get(0).nodeId);
        assertNull(t.get(2));
        assertNotNull(t.get(1));
        assertEquals(1, t.expire(9 * SEC + 1).size());
        assertEquals(0, t.size());
    }

    @Test
    void pagesAddUpAndAChangedShapeStartsOver() {
        DiscoveryTable t = new DiscoveryTable(5 * SEC);
        t.onAdvert(advert(1, 0, 2, 10), 0);
        DiscoveryTable.Advertiser a = t.onAdvert(advert(1, 1, 2, 20), 0);
        assertTrue(a.publishes(10) && a.publishes(20));
        t.onAdvert(advert(1, 0, 1, 30), 0);
        assertFalse(a.publishes(10) || a.publishes(20));
        assertTrue(a.publishes(30));
    }

    @Test
    void boundedNumberOfAdvertisers() {
        DiscoveryTable t = new DiscoveryTable(5 * SEC);
        for (int i = 1; i <= DiscoveryTable.MAX_ADVERTISERS; i++) {
            assertNotNull(t.onAdvert(advert(i, 0, 1, 1), 0));
        }
        assertNull(t.onAdvert(advert(-1, 0, 1, 1), 0), "full: a new node is dropped");
        assertNotNull(t.onAdvert(advert(1, 0, 1, 1), 0), "a known node is still refreshed");
    }
}
