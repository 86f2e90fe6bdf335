package io.rdmabus.samples;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.rdmabus.Bus;
import io.rdmabus.Delivery;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.samples.support.StatsText;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * The smallest useful program: two buses (think: two processes) on the default transport, one publishing a reliable
 * stream of strings, the other subscribing. Prints the transport chosen, progress once a second and a summary.
 *
 * <p>Usage: {@code QuickstartDemo [messages] [transport]} (defaults: 100000, auto).
 */
public final class QuickstartDemo {
    private QuickstartDemo() {
    }

    /**
     * @param args optional message count and transport name
     * @throws InterruptedException if interrupted while waiting
     */
    public static void main(final String[] args) throws InterruptedException {
        final int messages = args.length > 0 ? parsePositive(args[0]) : 100_000;
        final String transport = args.length > 1 ? args[1] : "auto";
        final Topic<String> topic = Topic.of("quickstart.greetings", Codecs.utf8(), Delivery.RELIABLE);

        try (Bus subscriberBus = Bus.builder().name("subscriber").transport(transport).build();
             Bus publisherBus = Bus.builder().name("publisher").transport(transport).build()) {
            System.out.println("transport: " + subscriberBus.transportName() + ("auto".equals(transport)
                ? " (chosen by 'auto': rdma-bus devices says why; RDMABUS_LOG_LEVEL=info logs it)" : ""));
            final AtomicLong received = new AtomicLong();
            final AtomicLong firstNs = new AtomicLong();
            final CountDownLatch done = new CountDownLatch(1);
            final Disposable subscription = subscriberBus.subscribe(topic).subscribe(value -> {
                final long n = received.incrementAndGet();
                if (n == 1) {
                    firstNs.set(System.nanoTime());
                }
                if (n == messages) {
                    done.countDown();
                }
            });
            final Disposable progress = Flux.interval(Duration.ofSeconds(1)).subscribe(tick -> System.out.println(received.get() == 0
                ? "  waiting for the subscription to connect (nothing received yet)"
                : String.format("  %,d / %,d received", received.get(), messages)));
            final long startNs = System.nanoTime();
            publisherBus.publish(topic, Flux.range(0, messages).map(i -> "hello #" + i)).block(Duration.ofMinutes(5));
            final boolean complete = done.await(2, TimeUnit.MINUTES);
            final long endNs = System.nanoTime();
            progress.dispose();
            // the counters before the subscription goes: a disposed subscription is no longer in stats()
            final SubscriptionStats stats = subscriberBus.stats().subscriptions().stream()
                .filter(s -> s.topic().equals(topic.name())).findFirst().orElse(null);
            subscription.dispose();
            final double seconds = (endNs - startNs) / 1e9;
            final double connectSeconds = firstNs.get() == 0 ? seconds : (firstNs.get() - startNs) / 1e9;
            final double flowSeconds = Math.max(1e-9, seconds - connectSeconds);
            System.out.printf("%s: %,d of %,d messages in %.2f s: %.2f s until the first arrived (connection set-up), then %.2f s"
                    + " (%,.0f msg/s)%n", complete ? "OK" : "INCOMPLETE", received.get(), messages, seconds, connectSeconds, flowSeconds,
                Math.max(0, received.get() - 1) / flowSeconds);
            System.out.println("subscription " + topic.name() + ": " + StatsText.of(stats));
            if (!complete) {
                System.exit(1);
            }
        }
    }

    private static int parsePositive(final String text) {
        try {
            final int n = Integer.parseInt(text);
            if (n > 0) {
                return n;
            }
        } catch (final NumberFormatException ignored) {
            // fall through to the usage message
        }
        System.err.println("usage: QuickstartDemo [messages > 0] [transport: auto|aeron-ipc|aeron-udp|tcp]; got '" + text + "'");
        System.exit(2);
        return 0;
    }
}
