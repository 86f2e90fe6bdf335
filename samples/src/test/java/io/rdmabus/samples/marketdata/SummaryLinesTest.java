package io.rdmabus.samples.marketdata;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The summary's figures add up, and say so in words when they do not. */
class SummaryLinesTest {
    @Test
    void quotesAddUpToWhatWasSent() {
        assertEquals("quotes: 12,247 received + 205,725 lost + 0 not accounted for at shutdown = 217,972 sent",
            SummaryLines.quotes(217_972, 12_247, 205_725));
        assertEquals(551, SummaryLines.unaccounted(217_972, 12_247, 205_174));
        assertEquals("quotes: 12,247 received + 205,174 lost + 551 not accounted for at shutdown = 217,972 sent (best effort: still in"
                + " flight when the feed stopped, or lost after the last quote received, which no later quote reports)",
            SummaryLines.quotes(217_972, 12_247, 205_174));
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
