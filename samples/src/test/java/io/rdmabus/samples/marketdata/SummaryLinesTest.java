package io.rdmabus.samples.marketdata;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmabus.SubscriptionStats;

import org.junit.jupiter.api.Test;

/** The summary's figures add up, and say so in words when they do not. */
class SummaryLinesTest {
    @Test
    void quotesAddUpToWhatWasSent() {
        final SubscriptionStats bus = new SubscriptionStats("md.quotes", 216_784, 12_247, 0, 1_188, 204_537, 0, 1024, 1024);
        assertEquals("quotes: 12,247 received + 205,725 lost + 0 not accounted for at shutdown = 217,972 sent",
            SummaryLines.quotes(217_972, 12_247, 205_725, bus));
        assertEquals(551, SummaryLines.unaccounted(217_972, 12_247, 205_174));
    }

    @Test
    void quotesNotAccountedForAreLocated() {
        // 300 never arrived, 200 wait in the ring, 51 were delivered but not yet counted by the strategy
        final SubscriptionStats bus = new SubscriptionStats("md.quotes", 216_484, 12_298, 0, 1_188, 203_986, 0, 1024, 824);
        assertEquals("quotes: 12,247 received + 205,174 lost + 551 not accounted for at shutdown = 217,972 sent (best effort, when the feed"
                + " stopped: 300 had not arrived or were lost after the last one that did, 200 were queued in the subscription, 51 were on"
                + " their way to the subscriber or lost without a later quote to report it)",
            SummaryLines.quotes(217_972, 12_247, 205_174, bus));
    }

    @Test
    void theBusCountOfTradesIncludesTheWarmUpOnes() {
        assertEquals("trades: 21,799 of 21,799 received, 0 lost; the bus delivered 21,800 = 21,799 + 1 warm-up trade",
            SummaryLines.trades(21_799, 21_799, 0, 1, 21_800));
        assertEquals("trades: 100 of 100 received, 0 lost; the bus delivered 103 = 100 + 3 warm-up trades",
            SummaryLines.trades(100, 100, 0, 3, 103));
        assertEquals("trades: 100 of 100 received, 0 lost; the bus delivered 104 = 100 + 3 warm-up trades (does NOT add up: 1 delivered"
            + " uncounted)", SummaryLines.trades(100, 100, 0, 3, 104));
    }
}
