package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.spi.PropertyDescriptor;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** What {@link RdmaTransportFactory#properties()} declares matches what {@link RdmaTransportConfig#parse} accepts. */
class RdmaPropertiesTest {
    private final Map<String, PropertyDescriptor> declared = new RdmaTransportFactory().properties();

    @Test
    void everyKnownKeyIsDescribedWithTheParsersDefault() {
        assertEquals(List.copyOf(RdmaTransportConfig.knownProperties().keySet()).stream().sorted().toList(),
            declared.keySet().stream().sorted().toList());
        declared.values().forEach(d -> {
            assertNotEquals("(not described)", d.description(), d.key());
            assertEquals(RdmaTransportConfig.knownProperties().get(d.key()), d.defaultValue(), d.key());
            assertNull(d.defaultValue().isEmpty() ? null : d.check(d.defaultValue()), d.key() + " default passes its own check");
        });
        assertTrue(declared.get("rdma.secret").secret());
    }

    @Test
    void theDeclaredDefaultsParseToTheDefaultConfiguration() {
        final Map<String, String> given = new HashMap<>();
        declared.values().stream().filter(d -> !d.defaultValue().isEmpty()).forEach(d -> given.put(d.key(), d.defaultValue()));
        assertEquals(RdmaTransportConfig.parse(Map.of()), RdmaTransportConfig.parse(given));
    }

    @Test
    void theDeclaredRangesAreTheParsers() {
        declared.values().stream().filter(d -> d.type() == PropertyDescriptor.Type.INTEGER).forEach(d -> {
            // the bounds of each range parse, except where another key narrows them (checked by the parser, named in its message)
            for (final long bound : new long[] {d.min(), d.max()}) {
                final Map<String, String> given = new HashMap<>(Map.of(d.key(), Long.toString(bound)));
                if (d.key().equals("rdma.retention.frames") && bound < 128) {
                    given.put("rdma.send.buffers", Long.toString(bound));
                }
                if (d.key().equals("rdma.retention.frames") && bound > 16384) {
                    given.put("rdma.frame.bytes", "256");
                }
                if (d.key().equals("rdma.cm.port.range") && bound > 1) {
                    given.put("rdma.cm.port.base", "1");
                }
                if (d.key().equals("rdma.frame.bytes") && bound > 16384) {
                    given.put("rdma.retention.frames", "128");
                }
                if (d.key().equals("rdma.cm.port.base") && bound > 1) {
                    given.put("rdma.cm.port.range", "1");
                }
                if (d.key().equals("rdma.send.buffers") && bound > 1024) {
                    given.put("rdma.retention.frames", Long.toString(bound));
                }
                RdmaTransportConfig.parse(given);
            }
            assertNotEquals(null, d.check(Long.toString(d.max() + 1)), d.key());
        });
    }
}
