package io.rdmabus;

import java.util.Objects;
import java.util.function.ToLongFunction;
import java.util.regex.Pattern;

import io.rdmabus.codec.Codec;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.TopicDescriptor;

/**
 * A named stream of values of one type: name + {@link Codec} + {@link Delivery}. Immutable; create once and share.
 *
 * <pre>{@code
 * Topic<String> news = Topic.of("news", Codecs.utf8(), Delivery.RELIABLE);
 * }</pre>
 *
 * @param <T> the value type
 */
public final class Topic<T> {
    /** Largest message a topic may declare, in bytes (16 MiB). */
    public static final int MAX_MESSAGE_LENGTH_LIMIT = 16 * 1024 * 1024;
    /** Default largest reliable message, in bytes. */
    public static final int DEFAULT_MAX_MESSAGE_LENGTH = 1024 * 1024;
    /** Most keys a last-value cache may declare. */
    public static final int MAX_LAST_VALUE_KEYS = 1 << 20;

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");

    private final String name;
    private final Codec<T> codec;
    private final Delivery delivery;
    private final int maxMessageLength;
    private final int topicId;
    /** The last-value cache's key, or null for a topic without one. */
    private final ToLongFunction<? super T> lastValueKey;
    private final int lastValueMaxKeys;
    /** Publications stamp each frame with the publisher's clock (the default); false: {@link #withoutTimestamps()}. */
    private final boolean timestamps;

    private Topic(final String name, final Codec<T> codec, final Delivery delivery, final int maxMessageLength,
                  final ToLongFunction<? super T> lastValueKey, final int lastValueMaxKeys, final boolean timestamps) {
        this.name = name;
        this.codec = codec;
        this.delivery = delivery;
        this.maxMessageLength = maxMessageLength;
        this.topicId = FrameHeader.topicId(name);
        this.lastValueKey = lastValueKey;
        this.lastValueMaxKeys = lastValueMaxKeys;
        this.timestamps = timestamps;
    }

    /**
     * @param name     1..128 characters of {@code [A-Za-z0-9._-]}
     * @param codec    how values become bytes
     * @param delivery best effort or reliable
     * @param <T>      value type
     * @return the topic, with {@link #DEFAULT_MAX_MESSAGE_LENGTH}
     * @throws BusConfigurationException for a bad name or a null argument
     */
    public static <T> Topic<T> of(final String name, final Codec<T> codec, final Delivery delivery) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new BusConfigurationException("Bad topic name '" + name + "': use 1 to 128 characters of A-Z a-z 0-9 . _ -");
        }
        if (codec == null) {
            throw new BusConfigurationException("Topic '" + name + "' needs a codec, e.g. Codecs.utf8() or Codecs.bytes()");
        }
        if (delivery == null) {
            throw new BusConfigurationException("Topic '" + name + "' needs a delivery: Delivery.BEST_EFFORT or Delivery.RELIABLE");
        }
        return new Topic<>(name, codec, delivery, DEFAULT_MAX_MESSAGE_LENGTH, null, 0, true);
    }

    /**
     * @param maxMessageLengthBytes largest encoded message, 1..{@link #MAX_MESSAGE_LENGTH_LIMIT}
     * @return a copy with that limit
     */
    public Topic<T> withMaxMessageLength(final int maxMessageLengthBytes) {
        if (maxMessageLengthBytes < 1 || maxMessageLengthBytes > MAX_MESSAGE_LENGTH_LIMIT) {
            throw new BusConfigurationException("Topic '" + name + "': maxMessageLength " + maxMessageLengthBytes
                + " is out of range 1.." + MAX_MESSAGE_LENGTH_LIMIT);
        }
        return new Topic<>(name, codec, delivery, maxMessageLengthBytes, lastValueKey, lastValueMaxKeys, timestamps);
    }

    /**
     * A copy with a last-value cache: every publication of the topic keeps the last message per key (e.g. per
     * instrument), and a subscriber that joins later first gets the latest value of every key of every publisher
     * session, then the live stream, with no gap and no duplicate at the seam (docs/architecture.md, "Late join").
     * Keys are longs (hash other keys yourself: two keys with one hash share a slot); a publication keeps at most
     * {@code maxKeys} of them and does not keep new keys beyond (a WARN names the topic, once per publication).
     *
     * @param key     the key of a value; called on the publishing thread for every message, must not allocate to be free
     * @param maxKeys keys a publication keeps, 1..{@link #MAX_LAST_VALUE_KEYS}
     * @return a copy with the cache
     */
    public Topic<T> withLastValueCache(final ToLongFunction<? super T> key, final int maxKeys) {
        if (key == null) {
            throw new BusConfigurationException("Topic '" + name + "': withLastValueCache needs a key function, e.g. Quote::instrumentId");
        }
        if (maxKeys < 1 || maxKeys > MAX_LAST_VALUE_KEYS) {
            throw new BusConfigurationException("Topic '" + name + "': last-value cache maxKeys " + maxKeys + " is out of range 1.."
                + MAX_LAST_VALUE_KEYS);
        }
        return new Topic<>(name, codec, delivery, maxMessageLength, key, maxKeys, timestamps);
    }

    /**
     * A copy whose publications leave the publisher's clock out of their frames: {@link Received#timestampNs()} and
     * {@link MessageHeader#timestampNs()} are 0 for its messages (the frame's field is 0 on the wire). A stamp costs one
     * clock read per message on the publishing thread, 25-35 ns on the 2-core build box: a third of what a 64-byte
     * message costs the publisher over Aeron IPC (docs/benchmarks.md, "What a frame's timestamp costs"). Leave it out when
     * the messages carry their own time (an SBE sending-time field) or nobody measures latency from it.
     *
     * @return a copy without timestamps
     */
    public Topic<T> withoutTimestamps() {
        return new Topic<>(name, codec, delivery, maxMessageLength, lastValueKey, lastValueMaxKeys, false);
    }

    /** @return true (the default) if publications stamp each frame with the publisher's wall clock */
    public boolean timestamps() {
        return timestamps;
    }

    /** @return the last-value cache's key function, or null when the topic has no cache */
    public ToLongFunction<? super T> lastValueKey() {
        return lastValueKey;
    }

    /** @return keys a publication's last-value cache keeps (0 without a cache) */
    public int lastValueMaxKeys() {
        return lastValueMaxKeys;
    }

    /** @return the name */
    public String name() {
        return name;
    }

    /** @return the codec */
    public Codec<T> codec() {
        return codec;
    }

    /** @return the delivery */
    public Delivery delivery() {
        return delivery;
    }

    /** @return the largest encoded message in bytes */
    public int maxMessageLength() {
        return maxMessageLength;
    }

    /** @return the id carried in frame headers */
    public int topicId() {
        return topicId;
    }

    /** @return what a transport needs to know */
    public TopicDescriptor descriptor() {
        return new TopicDescriptor(name, topicId, delivery, maxMessageLength);
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof Topic<?> t && t.name.equals(name) && t.delivery == delivery && t.maxMessageLength == maxMessageLength
            && t.codec.equals(codec);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, delivery, maxMessageLength);
    }

    @Override
    public String toString() {
        return "Topic[" + name + ", " + delivery + ", " + codec.name() + "]";
    }
}
