package io.rdmabus.samples.marketdata;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.Bus;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.codecs.Quote;

import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A deliberately slow strategy: it spends {@code workNs} on every quote, far slower than the feed. Its quote
 * subscription conflates per instrument ({@code SubscribeOptions.conflateLatest(Quote::instrumentId)}): while it
 * is busy, newer quotes replace older ones of the same instrument, so it always works on the latest price and the
 * skipped ticks show up as {@code lostBefore} and {@code droppedBySubscriber}. Trades (reliable) are never skipped.
 */
final class SlowStrategy extends MarketDataSubscriber {
    private final long workNs;
    private final Scheduler worker = Schedulers.newSingle("md-strategy-worker", true);

    SlowStrategy(final Bus bus, final CountDownLatch ready, final long workNs) {
        super("strategy", bus, ready);
        this.workNs = workNs;
    }

    @Override
    void start() {
        add(bus().subscribeReceived(MarketDataTopics.QUOTES, SubscribeOptions.conflateLatest(Quote::instrumentId))
            .publishOn(worker, 1) // demand of one: the bus conflates whatever arrives while we work
            .subscribe(q -> {
                quotes().record(q);
                LockSupport.parkNanos(workNs); // the "strategy work"
            }, this::onError));
        add(bus().subscribeReceived(MarketDataTopics.TRADES, SubscribeOptions.defaults()).subscribe(this::onTrade, this::onError));
    }

    @Override
    String describeState() {
        return String.format("%.0f us of work per quote, conflating per instrument", workNs / 1e3);
    }

    @Override
    public void close() {
        super.close();
        worker.dispose();
    }
}
