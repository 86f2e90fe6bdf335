package io.rdmabus.transport.tcp;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.rdmabus.Bus;
import io.rdmabus.BusConfigurationException;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.config.BusConfig;
import io.rdmabus.config.ConfigValue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import reactor.core.Disposable;

/** Buses built from properties files on real TCP sockets: the file's values are the ones in effect. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConfigFileTcpTest {
    private static final Duration WAIT = Duration.ofSeconds(15);

    @TempDir
    Path dir;

    private Path file(final String name, final String... lines) throws IOException {
        final Path f = dir.resolve(name);
        Files.write(f, List.of(lines));
        return f;
    }

    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0)) {
            return probe.getLocalPort();
        }
    }

    @Test
    void aBusBuiltFromAFileListensWhereTheFileSaysAndFindsItsSeedsThere() throws Exception {
        final int port = freePort();
        // the code says aeron-ipc on an ephemeral port: the file's transport and port win
        final Path subscriberFile = file("subscriber.properties", "rdmabus.name=from-file-sub", "rdmabus.transport=tcp",
            "rdmabus.idle-strategy=sleeping", "tcp.bind=127.0.0.1:" + port, "tcp.io.threads=2");
        // the publisher's event loop blocks in select at once (netty's own way); the subscriber's polls for the default window
        final Path publisherFile = file("publisher.properties", "rdmabus.transport=tcp", "rdmabus.seeds=tcp=127.0.0.1:" + port, "tcp.io.spin.us=0");
        final var subscriberBuilder = Bus.builder().name("from-code").transport("aeron-ipc").configFile(subscriberFile);
        final BusConfig effective = subscriberBuilder.effectiveConfig();
        assertEquals(new ConfigValue(TcpTransportConfig.BIND, "127.0.0.1:" + port, "file:" + subscriberFile,
            effective.value(TcpTransportConfig.BIND).description(), false), effective.value(TcpTransportConfig.BIND));
        assertEquals(ConfigValue.DEFAULT, effective.value(TcpTransportConfig.LINGER_MS).source(), "keys the file does not set keep their defaults");
        assertEquals("from-file-sub", effective.name());
        try (Bus subscriber = subscriberBuilder.build();
             Bus publisher = Bus.builder().name("pub-from-code").configFile(publisherFile).build()) {
            assertEquals("tcp", subscriber.stats().transport(), subscriber.stats().toString());
            final Topic<String> topic = Topic.of("config.file", Codecs.utf8(), Delivery.RELIABLE);
            final List<String> got = new CopyOnWriteArrayList<>();
            final Disposable subscription = subscriber.subscribe(topic).subscribe(got::add);
            try (BusPublication<String> pub = publisher.publication(topic)) {
                // the publisher found the subscriber only through the file's seed, at the file's listen port
                await("connected to 127.0.0.1:" + port).atMost(WAIT).until(pub::isConnected);
                for (int i = 0; i < 10; i++) {
                    while (pub.offer("m" + i) != PublishStatus.OK) {
                        Thread.onSpinWait();
                    }
                }
                await("10 messages").atMost(WAIT).until(() -> got.size() == 10);
            } finally {
                subscription.dispose();
            }
            assertEquals("m9", got.get(9));
        }
    }

    @Test
    void theFactoriesOwnCheckNamesTheFileThatSetTheKey() throws IOException {
        final Path f = file("frames.properties", "rdmabus.transport=tcp", "tcp.frame.max.bytes=65536", "tcp.outbound.buffer.bytes=1000");
        final var ex = assertThrows(BusConfigurationException.class, () -> Bus.builder().configFile(f).build());
        assertTrue(ex.getMessage().contains("must hold at least two frames") && ex.getMessage().contains("tcp.outbound.buffer.bytes from file:" + f),
            ex.getMessage());
    }
}
