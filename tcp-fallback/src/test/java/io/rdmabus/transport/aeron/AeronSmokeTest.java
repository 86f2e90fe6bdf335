package io.rdmabus.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.rdmabus.Bus;
import io.rdmabus.Delivery;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.spi.StaticSeedDiscovery;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.publisher.Flux;

@Timeout(60)
class AeronSmokeTest {
    @Test
    void unicast() {
        final int port = AeronTestSupport.freeUdpPort();
        final Topic<String> topic = Topic.of("smoke", Codecs.utf8(), Delivery.RELIABLE);
        try (Bus pub = Bus.builder().name("pub").transport("aeron-udp").transportProperty("endpoint", "127.0.0.1:" + port).build();
             Bus sub = Bus.builder().name("sub").transport("aeron-udp").transportProperty("endpoint", "127.0.0.1:" + AeronTestSupport.freeUdpPort())
                 .discovery(new StaticSeedDiscovery(Map.of("aeron-udp", List.of("127.0.0.1:" + port)))).build()) {
            final var received = sub.subscribe(topic).take(100).collectList().toFuture();
            pub.publish(topic, Flux.range(0, 100).map(i -> "m" + i)).block(Duration.ofSeconds(20));
            assertEquals(100, received.join().size());
        }
    }
}
