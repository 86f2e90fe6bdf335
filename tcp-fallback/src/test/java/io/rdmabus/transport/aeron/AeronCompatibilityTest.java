package io.rdmabus.transport.aeron;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.aeron.Aeron;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.frame.FrameHeader;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A plain Aeron application (its own media driver and client, no bus code on the read path) subscribes to the channel
 * and stream id documented in {@code docs/aeron-compat.md} and parses the bus's frames: 32-byte little-endian header,
 * then the payload.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AeronCompatibilityTest {
    @Test
    void plainAeronSubscriberReadsTheBusFrames() throws Exception {
        final String endpoint = "127.0.0.1:" + AeronTestSupport.freeUdpPort();
        final Topic<String> topic = Topic.of("compat.prices", Codecs.utf8(), Delivery.RELIABLE);
        try (MediaDriver driver = AeronTransportTest.launchDriver("plain-app");
             Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(driver.aeronDirectoryName()));
             Bus bus = Bus.builder().name("compat").transport("aeron-udp").transportProperty("endpoint", endpoint).build()) {
            // documented: channel aeron:udp?endpoint=<local>:0|control=<publisher endpoint>|control-mode=dynamic, stream id = topic id
            final String channel = "aeron:udp?endpoint=127.0.0.1:0|control=" + endpoint + "|control-mode=dynamic";
            final int streamId = FrameHeader.topicId(topic.name());
            try (Subscription plain = aeron.addSubscription(channel, streamId)) {
                final BusPublication<String> pub = bus.publication(topic);
                final List<String> payloads = new ArrayList<>();
                final List<long[]> headers = new ArrayList<>();
                final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                int sent = 0;
                while (payloads.size() < 3) {
                    assertTrue(System.nanoTime() < deadlineNs, "the plain Aeron subscriber got " + payloads.size() + " frames");
                    if (sent < 3 && pub.offer("tick-" + sent) == PublishStatus.OK) {
                        sent++;
                    }
                    plain.poll((buffer, offset, length, header) -> {
                        assertEquals(FrameHeader.VERSION, buffer.getByte(offset) & 0xFF, "version");
                        assertEquals(FrameHeader.TYPE_DATA, buffer.getByte(offset + 1) & 0xFF, "type");
                        assertEquals(FrameHeader.FLAGS_UNFRAGMENTED, buffer.getShort(offset + 2, java.nio.ByteOrder.LITTLE_ENDIAN) & 0xFFFF);
                        assertEquals(length, buffer.getInt(offset + 4, java.nio.ByteOrder.LITTLE_ENDIAN), "frameLength");
                        headers.add(new long[] {
                            buffer.getInt(offset + 8, java.nio.ByteOrder.LITTLE_ENDIAN),
                            buffer.getInt(offset + 12, java.nio.ByteOrder.LITTLE_ENDIAN),
                            buffer.getLong(offset + 16, java.nio.ByteOrder.LITTLE_ENDIAN),
                            buffer.getLong(offset + 24, java.nio.ByteOrder.LITTLE_ENDIAN)});
                        payloads.add(buffer.getStringWithoutLengthUtf8(offset + 32, length - 32));
                    }, 10);
                    Thread.sleep(1);
                }
                assertEquals(List.of("tick-0", "tick-1", "tick-2"), payloads);
                for (int i = 0; i < headers.size(); i++) {
                    final long[] h = headers.get(i);
                    assertEquals(topic.topicId(), (int) h[0], "topicId");
                    assertEquals(pub.sessionId(), (int) h[1], "sessionId");
                    assertEquals(i, h[2], "sequence");
                    assertTrue(Math.abs(h[3] - System.currentTimeMillis() * 1_000_000L) < TimeUnit.MINUTES.toNanos(1), "timestampNs");
                }
                assertEquals("tick-0".getBytes(StandardCharsets.UTF_8).length, "tick-0".length());
            }
        }
    }
}
