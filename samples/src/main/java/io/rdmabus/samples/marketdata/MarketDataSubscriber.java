package io.rdmabus.samples.marketdata;

import java.util.Optional;
import java.util.concurrent.CountDownLatch;

import io.rdmabus.Bus;
import io.rdmabus.Received;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.codecs.Trade;
import io.rdmabus.samples.support.LatencyMeter;

import reactor.core.Disposable;
import reactor.core.Disposables;

/** What both subscriber roles share: a bus of their own, meters for quotes and trades, and the warm-up handshake. */
abstract class MarketDataSubscriber implements AutoCloseable {
    private final String role;
    private final Bus bus;
    private final CountDownLatch ready;
    private final LatencyMeter quotes = new LatencyMeter();
    private final LatencyMeter trades = new LatencyMeter();
    private final Disposable.Composite subscriptions = Disposables.composite();
    private volatile long lastTradeId = Long.MIN_VALUE;
    private boolean sawWarmUp;
    private volatile long warmUpTrades; // written by the trade subscription's one thread
    private volatile Throwable error;

    MarketDataSubscriber(final String role, final Bus bus, final CountDownLatch ready) {
        this.role = role;
        this.bus = bus;
        this.ready = ready;
    }

    /** Subscribes to the topics. */
    abstract void start();

    final void add(final Disposable subscription) {
        subscriptions.add(subscription);
    }

    final void onTrade(final Received<Trade> trade) {
        if (trade.value().tradeId() == MarketDataTopics.WARM_UP_TRADE_ID) {
            warmUpTrades++;
            if (!sawWarmUp) {
                sawWarmUp = true;
                ready.countDown(); // from now on this subscriber is on the reliable stream and sees every real trade
            }
            return;
        }
        trades.record(trade);
        lastTradeId = trade.value().tradeId();
    }

    final void onError(final Throwable cause) {
        error = cause;
        System.err.println(role + ": subscription failed: " + cause);
    }

    String role() {
        return role;
    }

    Bus bus() {
        return bus;
    }

    LatencyMeter quotes() {
        return quotes;
    }

    LatencyMeter trades() {
        return trades;
    }

    /** @return warm-up trades delivered: the bus counts them, the trade meter does not */
    long warmUpTrades() {
        return warmUpTrades;
    }

    long lastTradeId() {
        return lastTradeId;
    }

    Throwable error() {
        return error;
    }

    /** @param topic a topic name @return the bus's counters of that subscription, if any */
    Optional<SubscriptionStats> stats(final String topic) {
        return bus.stats().subscriptions().stream().filter(s -> s.topic().equals(topic)).findFirst();
    }

    /** @return a few words on what this role holds, for the summary */
    abstract String describeState();

    @Override
    public void close() {
        subscriptions.dispose();
    }
}
