package io.rdmabus.samples.marketdata;

import io.rdmabus.SubscriptionStats;

/**
 * The market-data summary's accounting lines, written so that the figures on a line add up: every quote sent is
 * received, reported lost, or still not accounted for when the sample stops; every trade the bus delivered is a real
 * trade or a warm-up one.
 */
final class SummaryLines {
    private SummaryLines() {
    }

    /**
     * @param sent     quotes the feed's bus took
     * @param received quotes the subscriber received
     * @param lost     quotes reported lost to it ({@code lostBefore}: conflated, dropped by its ring, gaps)
     * @param bus      the bus's counters of the subscriber's quote subscription, or null
     * @return {@code quotes: R received + L lost + U not accounted for at shutdown = S sent}, and where the U were
     */
    static String quotes(final long sent, final long received, final long lost, final SubscriptionStats bus) {
        final long unaccounted = unaccounted(sent, received, lost);
        final String line = String.format("quotes: %,d received + %,d lost + %,d not accounted for at shutdown = %,d sent", received, lost,
            unaccounted, sent);
        if (unaccounted == 0 || bus == null) {
            return line;
        }
        // sent = arrived (frames received + gaps seen) + not arrived; frames received = delivered + dropped + still queued
        final long notArrived = sent - bus.framesReceived() - bus.gapMessages();
        final long queued = bus.framesReceived() - bus.messagesDelivered() - bus.droppedBySubscriber();
        return line + String.format(" (best effort, when the feed stopped: %,d had not arrived or were lost after the last one that did,"
            + " %,d were queued in the subscription, %,d were on their way to the subscriber or lost without a later quote to report it)",
            notArrived, queued, unaccounted - notArrived - queued);
    }

    /**
     * @param sent     quotes sent
     * @param received quotes received
     * @param lost     quotes reported lost
     * @return the quotes neither received nor reported lost
     */
    static long unaccounted(final long sent, final long received, final long lost) {
        return sent - received - lost;
    }

    /**
     * @param sent          real trades published
     * @param received      real trades received
     * @param lost          trades reported lost
     * @param warmUp        warm-up trades the subscriber received (sent until every subscriber is connected)
     * @param busDelivered  the bus's count of trades delivered to the subscription (real and warm-up)
     * @return {@code trades: R of S received, L lost; the bus delivered D = R + W warm-up}
     */
    static String trades(final long sent, final long received, final long lost, final long warmUp, final long busDelivered) {
        return String.format("trades: %,d of %,d received, %,d lost; the bus delivered %,d = %,d + %,d warm-up trade%s%s", received, sent,
            lost, busDelivered, received, warmUp, warmUp == 1 ? "" : "s",
            busDelivered == received + warmUp ? "" : " (does NOT add up: " + (busDelivered - received - warmUp) + " delivered uncounted)");
    }
}
