package io.rdmabus.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.spi.StaticSeedDiscovery;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.Disposable;

/** The meters of two real buses over TCP on loopback, read from a SimpleMeterRegistry, against their stats(). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaBusMetricsTest {
    private static final Topic<String> NEWS = Topic.of("metrics.news", Codecs.utf8(), Delivery.RELIABLE);
    private static final int MESSAGES = 2_000;

    @Test
    void theMetersShowTheBusStatsWithBusTransportAndTopicTags() throws Exception {
        final int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        final SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Bus sub = Bus.builder().name("metrics-sub").transport("tcp").countersDir("off").transportProperty("tcp.bind", "127.0.0.1:" + port)
                .build();
             Bus pub = Bus.builder().name("metrics-pub").transport("tcp").countersDir("off")
                 .discovery(new StaticSeedDiscovery(Map.of("tcp", List.of("127.0.0.1:" + port)))).build();
             RdmaBusMetrics subMetrics = new RdmaBusMetrics(sub);
             RdmaBusMetrics pubMetrics = new RdmaBusMetrics(pub)) {
            subMetrics.bindTo(registry);
            pubMetrics.bindTo(registry);
            final Disposable subscription = sub.subscribe(NEWS).subscribe();
            subMetrics.refresh(); // the subscription appeared after bindTo: what the periodic refresh does
            try (BusPublication<String> publication = pub.publication(NEWS)) {
                Awaitility.await("the publication connects").atMost(Duration.ofSeconds(30)).until(publication::isConnected);
                for (int i = 0; i < MESSAGES; i++) {
                    while (publication.offer("news " + i) != PublishStatus.OK) {
                        Thread.onSpinWait();
                    }
                }
                Awaitility.await("every message delivered").atMost(Duration.ofSeconds(30))
                    .until(() -> sub.stats().subscriptions().get(0).messagesDelivered() == MESSAGES);
            }
            final SubscriptionStats stats = sub.stats().subscriptions().get(0);
            assertEquals(MESSAGES, registry.get("rdmabus.published").tags("bus", "metrics-pub", "transport", "tcp").functionCounter().count());
            assertEquals(stats.messagesDelivered(), registry.get("rdmabus.subscription.messages.delivered")
                .tags("bus", "metrics-sub", "transport", "tcp", "topic", NEWS.name()).functionCounter().count());
            assertEquals(stats.framesReceived(), registry.get("rdmabus.subscription.frames.received").tag("topic", NEWS.name()).functionCounter().count());
            assertEquals(stats.ringCapacity(), registry.get("rdmabus.subscription.ring.capacity").tag("topic", NEWS.name()).gauge().value());
            assertEquals(0, registry.get("rdmabus.subscription.gaps").tag("topic", NEWS.name()).functionCounter().count());
            assertEquals(pub.stats().transportCounters().get("connectAttempts"),
                (long) registry.get("rdmabus.transport.connect.attempts").tag("bus", "metrics-pub").functionCounter().count());

            subscription.dispose();
            Awaitility.await("the subscription is gone").atMost(Duration.ofSeconds(10)).until(() -> sub.stats().subscriptions().isEmpty());
            subMetrics.refresh();
            assertNull(registry.find("rdmabus.subscription.messages.delivered").tag("bus", "metrics-sub").functionCounter(),
                "a gone topic's meters are removed");
        }
    }
}
