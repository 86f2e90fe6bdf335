package io.rdmabus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.core.TestCodecs;

import org.junit.jupiter.api.Test;

class TopicTest {
    @Test
    void validatesNameCodecDeliveryAndLimits() {
        final var bad = assertThrows(BusConfigurationException.class, () -> Topic.of("has space", TestCodecs.LONG, Delivery.RELIABLE));
        assertTrue(bad.getMessage().contains("A-Z a-z 0-9"), bad.getMessage());
        assertThrows(BusConfigurationException.class, () -> Topic.of("", TestCodecs.LONG, Delivery.RELIABLE));
        assertThrows(BusConfigurationException.class, () -> Topic.of("x".repeat(129), TestCodecs.LONG, Delivery.RELIABLE));
        assertThrows(BusConfigurationException.class, () -> Topic.of("ok", null, Delivery.RELIABLE));
        assertThrows(BusConfigurationException.class, () -> Topic.of("ok", TestCodecs.LONG, null));
        final Topic<Long> topic = Topic.of("md.quotes-1_A", TestCodecs.LONG, Delivery.BEST_EFFORT);
        assertThrows(BusConfigurationException.class, () -> topic.withMaxMessageLength(0));
        assertThrows(BusConfigurationException.class, () -> topic.withMaxMessageLength(Topic.MAX_MESSAGE_LENGTH_LIMIT + 1));
        assertEquals(100, topic.withMaxMessageLength(100).maxMessageLength());
        assertEquals(topic.topicId(), topic.descriptor().topicId());
    }

    @Test
    void timestampsAreOnByDefaultAndOffStaysOffThroughTheOtherCopies() {
        final Topic<Long> stamped = Topic.of("t", TestCodecs.LONG, Delivery.RELIABLE);
        assertTrue(stamped.timestamps());
        final Topic<Long> unstamped = stamped.withoutTimestamps().withMaxMessageLength(4096).withLastValueCache(v -> v, 8);
        assertFalse(unstamped.timestamps());
        assertEquals(4096, unstamped.maxMessageLength());
        assertEquals(8, unstamped.lastValueMaxKeys());
        assertTrue(stamped.withLastValueCache(v -> v, 8).withMaxMessageLength(4096).timestamps());
    }

    @Test
    void idleStrategyNamesAreCheckedWithTheListOfValidOnes() {
        final var ex = assertThrows(BusConfigurationException.class, () -> IdleStrategies.supplier("spinny"));
        assertTrue(ex.getMessage().contains(IdleStrategies.NAMES), ex.getMessage());
        for (final String name : IdleStrategies.NAMES.split(", ")) {
            IdleStrategies.supplier(name).get().idle(0);
        }
        assertTrue(IdleStrategies.neverParks(IdleStrategies.supplier("busy-spin").get()));
        assertTrue(IdleStrategies.neverParks(IdleStrategies.supplier("yielding").get()));
        assertFalse(IdleStrategies.neverParks(IdleStrategies.supplier("backoff").get()));
        assertFalse(IdleStrategies.neverParks(IdleStrategies.supplier("sleeping").get()));
    }

    @Test
    void subscribeOptionsValidateRingSize() {
        assertThrows(BusConfigurationException.class, () -> SubscribeOptions.<Long>defaults().withRingSize(1000));
        assertThrows(BusConfigurationException.class, () -> SubscribeOptions.dropOldest(0));
    }
}
