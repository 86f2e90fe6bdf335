package io.rdmabus.spi;

import io.rdmabus.Delivery;

/**
 * What a transport needs to know of a topic: its name, the 32-bit id carried in every frame header,
 * its delivery, and the largest message the bus will hand over for it.
 *
 * @param name             the topic name (validated by the bus: {@code [A-Za-z0-9._-]{1,128}})
 * @param topicId          stable id derived from the name, carried in each frame
 * @param delivery         best-effort datagrams or a reliable stream
 * @param maxMessageLength largest application message in bytes; larger ones are refused at publish time
 */
public record TopicDescriptor(String name, int topicId, Delivery delivery, int maxMessageLength) {
}
