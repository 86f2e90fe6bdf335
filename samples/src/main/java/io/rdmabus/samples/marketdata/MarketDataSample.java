package io.rdmabus.samples.marketdata;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.rdmabus.Bus;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.samples.support.LatencyMeter;
import io.rdmabus.samples.support.LocalBuses;
import io.rdmabus.samples.support.StatsText;

import org.HdrHistogram.Histogram;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Market-data fan-out: a feed publishes quotes (best effort) and trades (reliable) for a set of instruments at a set
 * rate with bursts; an order-book builder and a deliberately slow, conflating strategy subscribe, and half-way through a
 * second order book subscribes late and gets every instrument at once from the feed's last-value cache. Each role has its
 * own bus (think: its own process) in this JVM. Prints live rates, losses and end-to-end latency once a second, then
 * a summary.
 *
 * <p>Usage: {@code MarketDataSample [--transport auto] [--duration-s 10] [--instruments 16] [--rate 20000] ...}
 * ({@code --help} lists all). Exit code 0 when every trade reached every subscriber, 1 otherwise, 2 for bad flags.
 */
@Command(name = "market-data", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Market-data fan-out: quotes (best effort) and trades (reliable) to an order-book builder and a slow conflating strategy.")
public final class MarketDataSample implements Callable<Integer> {
    @Option(names = "--transport", defaultValue = "auto", description = "auto, aeron-ipc, aeron-udp, tcp, ... (default: ${DEFAULT-VALUE})")
    String transport;
    @Option(names = "--duration-s", defaultValue = "10", description = "how long the feed runs, seconds (default: ${DEFAULT-VALUE})")
    double durationS;
    @Option(names = "--instruments", defaultValue = "16", description = "instruments quoted (default: ${DEFAULT-VALUE})")
    int instruments;
    @Option(names = "--rate", defaultValue = "20000", description = "steady quotes per second (default: ${DEFAULT-VALUE})")
    int quotesPerSecond;
    @Option(names = "--burst-size", defaultValue = "2000", description = "extra quotes sent back to back per burst, 0 for none (default: ${DEFAULT-VALUE})")
    int burstSize;
    @Option(names = "--burst-interval-ms", defaultValue = "1000", description = "time between bursts (default: ${DEFAULT-VALUE})")
    int burstIntervalMs;
    @Option(names = "--trade-every", defaultValue = "10", description = "one trade per this many quotes (default: ${DEFAULT-VALUE})")
    int tradeEvery;
    @Option(names = "--strategy-work-us", defaultValue = "500", description = "the slow strategy's work per quote, microseconds (default: ${DEFAULT-VALUE})")
    int strategyWorkUs;

    /** For picocli. */
    public MarketDataSample() {
    }

    /**
     * @param transport        transport name or auto
     * @param durationNs       feed duration
     * @param instruments      instrument count
     * @param quotesPerSecond  steady quote rate
     * @param burstSize        quotes per burst
     * @param burstIntervalMs  time between bursts
     * @param tradeEvery       one trade per this many quotes
     * @param strategyWorkNs   the slow strategy's work per quote
     */
    public record Settings(String transport, long durationNs, int instruments, int quotesPerSecond, int burstSize, int burstIntervalMs,
                           int tradeEvery, long strategyWorkNs) {
        /** Validates, with messages naming the flag to change. */
        public Settings {
            require(durationNs > 0, "--duration-s must be > 0");
            require(instruments >= 1 && instruments <= 100_000, "--instruments must be in 1..100000, was " + instruments);
            require(quotesPerSecond >= 1 && quotesPerSecond <= 10_000_000, "--rate must be in 1..10000000, was " + quotesPerSecond);
            require(burstSize >= 0, "--burst-size must be >= 0, was " + burstSize);
            require(burstIntervalMs >= 1, "--burst-interval-ms must be >= 1, was " + burstIntervalMs);
            require(tradeEvery >= 1, "--trade-every must be >= 1, was " + tradeEvery);
            require(strategyWorkNs >= 0, "--strategy-work-us must be >= 0");
        }

        private static void require(final boolean ok, final String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }

    /**
     * What one subscriber saw.
     *
     * @param role             book or strategy
     * @param quotesReceived   quotes delivered
     * @param quotesLost       quotes reported lost ({@code lostBefore} sum: conflated, dropped, gaps)
     * @param tradesReceived   trades delivered (warm-up trades excluded)
     * @param tradesLost       trades reported lost ({@code lostBefore} sum)
     * @param quoteStats       the bus's counters of the quote subscription, or null
     * @param tradeStats       the bus's counters of the trade subscription, or null
     * @param quoteLatencyNs   end-to-end quote latency
     * @param tradeLatencyNs   end-to-end trade latency
     */
    public record SubscriberResult(String role, long quotesReceived, long quotesLost, long tradesReceived, long tradesLost,
                                   SubscriptionStats quoteStats, SubscriptionStats tradeStats, Histogram quoteLatencyNs,
                                   Histogram tradeLatencyNs) {
    }

    /**
     * @param transport       the transport the buses used
     * @param quotesSent      quotes taken by the publisher's bus
     * @param quotesDropped   quotes refused at the source (best effort: no subscriber or no room)
     * @param tradesSent      trades published
     * @param subscribers     per subscriber
     * @param lateBook        the seam of the order book started half-way (late join), or null if it saw no live quote
     */
    public record Result(String transport, long quotesSent, long quotesDropped, long tradesSent, List<SubscriberResult> subscribers,
                         LateOrderBook.Result lateBook) {
        /** @return true if every subscriber received every trade and reported no trade lost */
        public boolean tradesComplete() {
            return subscribers.stream().allMatch(s -> s.tradesReceived() == tradesSent && s.tradesLost() == 0);
        }
    }

    /**
     * @param args command line
     */
    public static void main(final String[] args) {
        System.exit(new CommandLine(new MarketDataSample()).execute(args));
    }

    @Override
    public Integer call() throws InterruptedException {
        final Settings settings = new Settings(transport, (long) (durationS * 1e9), instruments, quotesPerSecond, burstSize, burstIntervalMs,
            tradeEvery, TimeUnit.MICROSECONDS.toNanos(strategyWorkUs));
        final Result result = run(settings, System.out);
        return result.tradesComplete() ? 0 : 1;
    }

    /**
     * Runs the sample and prints its progress.
     *
     * @param settings the settings
     * @param out      where to print
     * @return what happened
     * @throws InterruptedException if interrupted
     */
    public static Result run(final Settings settings, final PrintStream out) throws InterruptedException {
        final long sampleStartNs = System.nanoTime();
        try (LocalBuses buses = LocalBuses.create(settings.transport(), 4)) {
            out.printf("transport: %s (requested '%s'); %d instruments, %,d quotes/s + bursts of %,d every %d ms, a trade every %d quotes,"
                    + " %.1f s%n", buses.transport(), settings.transport(), settings.instruments(), settings.quotesPerSecond(),
                settings.burstSize(), settings.burstIntervalMs(), settings.tradeEvery(), settings.durationNs() / 1e9);
            final CountDownLatch ready = new CountDownLatch(2);
            final Bus bookBus = buses.newBus("md-book");
            final Bus strategyBus = buses.newBus("md-strategy");
            final Bus feedBus = buses.newBus("md-feed");
            final LateOrderBook lateBook = new LateOrderBook(buses.newBus("md-late-book"), settings.instruments());
            final List<MarketDataSubscriber> subscribers = List.of(new OrderBookBuilder(bookBus, ready),
                new SlowStrategy(strategyBus, ready, settings.strategyWorkNs()));
            subscribers.forEach(MarketDataSubscriber::start);
            final MarketDataFeed feed = new MarketDataFeed(feedBus, settings, ready);
            final Thread feedThread = new Thread(feed, "md-feed-publisher");
            feedThread.setDaemon(true);
            feedThread.start();
            // an order book that subscribes half-way through: the last-value cache makes it complete at once
            final Thread lateStarter = new Thread(() -> {
                try {
                    ready.await();
                    TimeUnit.NANOSECONDS.sleep(settings.durationNs() / 2);
                    lateBook.start(sampleStartNs);
                } catch (final InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }, "md-late-book-starter");
            lateStarter.setDaemon(true);
            lateStarter.start();
            try {
                report(out, feed, subscribers, ready);
                feedThread.join(TimeUnit.SECONDS.toMillis(30));
                if (feed.failure() != null) {
                    out.println("feed failed: " + feed.failure().getMessage());
                }
                // reliable trades may still be in flight: wait (bounded) until every subscriber has them all
                final long drainDeadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (System.nanoTime() < drainDeadlineNs
                    && subscribers.stream().anyMatch(s -> s.trades().received() + s.trades().lost() < feed.tradesSent())) {
                    Thread.sleep(10);
                }
                drainQuotes(feed, subscribers);
                return summary(out, buses.transport(), feed, subscribers, lateBook);
            } finally {
                lateStarter.interrupt();
                lateBook.close();
                feed.stop();
                feedThread.join(TimeUnit.SECONDS.toMillis(5));
                subscribers.forEach(MarketDataSubscriber::close);
                feed.close();
            }
        }
    }

    private static void report(final PrintStream out, final MarketDataFeed feed, final List<MarketDataSubscriber> subscribers,
                               final CountDownLatch ready) throws InterruptedException {
        final long startNs = System.nanoTime();
        long nextNs = startNs + TimeUnit.SECONDS.toNanos(1);
        long lastQuotes = 0;
        long lastDropped = 0;
        long lastTrades = 0;
        while (feed.running()) {
            final long sleepNs = nextNs - System.nanoTime();
            if (sleepNs > 0) {
                TimeUnit.NANOSECONDS.sleep(Math.min(sleepNs, TimeUnit.MILLISECONDS.toNanos(100)));
                continue;
            }
            final long second = TimeUnit.NANOSECONDS.toSeconds(nextNs - startNs);
            nextNs += TimeUnit.SECONDS.toNanos(1);
            if (ready.getCount() > 0) {
                out.printf("[%3ds] waiting for %d subscriber(s) to connect%n", second, ready.getCount());
                continue;
            }
            // take every figure first, then print (printing is slow on a busy machine); subscribers before the feed, so a
            // subscriber's count never looks ahead of what the feed reports as sent
            final List<String> lines = new ArrayList<>();
            for (final MarketDataSubscriber s : subscribers) {
                final LatencyMeter.Interval qi = s.quotes().interval();
                final LatencyMeter.Interval ti = s.trades().interval();
                final SubscriptionStats qs = s.stats(MarketDataTopics.QUOTES.name()).orElse(null);
                lines.add(String.format("[%3ds] %-9s per second: quotes %,9d (lost %,7d), trades %,7d (lost %d) | since start: bus gaps %,d,"
                        + " dropped %,d | latency quotes %s, trades %s", second, s.role(), qi.received(), qi.lost(), ti.received(), ti.lost(),
                    qs == null ? 0 : qs.gapMessages(), qs == null ? 0 : qs.droppedBySubscriber(), LatencyMeter.percentiles(qi.latencyNs()),
                    LatencyMeter.percentiles(ti.latencyNs())));
            }
            final long q = feed.quotesSent();
            final long d = feed.quotesDropped();
            final long t = feed.tradesSent();
            out.printf("[%3ds] feed      per second: quotes %,9d (refused %,7d), trades %,7d%n", second, q - lastQuotes, d - lastDropped,
                t - lastTrades);
            lines.forEach(out::println);
            lastQuotes = q;
            lastDropped = d;
            lastTrades = t;
        }
    }

    /**
     * Waits (at most 5 s) until every subscriber has accounted for every quote sent, received or reported lost, or
     * makes no more progress for 500 ms: best-effort quotes may still be in the transport, a ring, the strategy's
     * conflation or its worker when the feed stops. What is left is printed as not accounted for.
     */
    private static void drainQuotes(final MarketDataFeed feed, final List<MarketDataSubscriber> subscribers) throws InterruptedException {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        long lastSeen = -1;
        long lastChangeNs = System.nanoTime();
        while (System.nanoTime() < deadlineNs) {
            long seen = 0;
            boolean complete = true;
            for (final MarketDataSubscriber s : subscribers) {
                final long accounted = s.quotes().received() + s.quotes().lost();
                seen += accounted;
                complete &= accounted >= feed.quotesSent();
            }
            if (complete) {
                return;
            }
            if (seen != lastSeen) {
                lastSeen = seen;
                lastChangeNs = System.nanoTime();
            } else if (System.nanoTime() - lastChangeNs > TimeUnit.MILLISECONDS.toNanos(500)) {
                return;
            }
            Thread.sleep(10);
        }
    }

    private static Result summary(final PrintStream out, final String transport, final MarketDataFeed feed,
                                  final List<MarketDataSubscriber> subscribers, final LateOrderBook lateBook) {
        final List<SubscriberResult> results = new ArrayList<>();
        out.printf("== summary (%s) ==%n", transport);
        out.printf("feed      quotes sent %,d (refused at source %,d), trades sent %,d%n", feed.quotesSent(), feed.quotesDropped(),
            feed.tradesSent());
        for (final MarketDataSubscriber s : subscribers) {
            s.quotes().interval();
            s.trades().interval();
            final SubscriptionStats qs = s.stats(MarketDataTopics.QUOTES.name()).orElse(null);
            final SubscriptionStats ts = s.stats(MarketDataTopics.TRADES.name()).orElse(null);
            final SubscriberResult r = new SubscriberResult(s.role(), s.quotes().received(), s.quotes().lost(), s.trades().received(),
                s.trades().lost(), qs, ts, s.quotes().total(), s.trades().total());
            results.add(r);
            out.printf("%-9s %s%n", s.role(), SummaryLines.quotes(feed.quotesSent(), r.quotesReceived(), r.quotesLost(), qs));
            out.printf("%-9s %s%s%n", "", SummaryLines.trades(feed.tradesSent(), r.tradesReceived(), r.tradesLost(), s.warmUpTrades(),
                ts == null ? 0 : ts.messagesDelivered()), s.error() == null ? "" : " ERROR " + s.error());
            out.printf("%-9s latency quotes %s; after the first %d s: %s%n", "", LatencyMeter.percentiles(r.quoteLatencyNs()),
                LatencyMeter.WARM_UP_INTERVALS, LatencyMeter.percentiles(s.quotes().steadyState()));
            out.printf("%-9s latency trades %s; after the first %d s: %s%n", "", LatencyMeter.percentiles(r.tradeLatencyNs()),
                LatencyMeter.WARM_UP_INTERVALS, LatencyMeter.percentiles(s.trades().steadyState()));
            out.printf("%-9s bus, quotes: %s%n", "", StatsText.of(qs));
            out.printf("%-9s bus, trades: %s%n", "", StatsText.of(ts));
            out.printf("%-9s %s%n", "", s.describeState());
        }
        out.println(lateBook.describe());
        final Result result = new Result(transport, feed.quotesSent(), feed.quotesDropped(), feed.tradesSent(), results, lateBook.result());
        out.println(result.tradesComplete() ? "OK: every trade reached every subscriber" : "FAILED: trades missing (see above)");
        return result;
    }
}
