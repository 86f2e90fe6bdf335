package io.rdmabus.tck.remote;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.lang.reflect.Constructor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToLongFunction;

import io.rdmabus.BusException;
import io.rdmabus.BusStats;
import io.rdmabus.Delivery;
import io.rdmabus.SlowConsumerPolicy;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.SubscriptionStats;
import io.rdmabus.Topic;
import io.rdmabus.codec.Codec;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * The bus-host protocol: every connection starts with {@link #MAGIC} and a kind byte, then carries length-implied
 * binary messages written with {@link DataOutputStream} (big-endian, strings as modified UTF-8). One connection per
 * purpose, so each is a simple state machine:
 * <ul>
 *   <li>{@link #KIND_CONTROL}: request/response from the client: new bus, close bus, stats, ping, shutdown.</li>
 *   <li>{@link #KIND_SUBSCRIBE}: one subscription; the client sends REQUEST(n)/CANCEL, the host NEXT/ERROR/COMPLETE.
 *       The host requests from the bus exactly what the client requested, so demand crosses unchanged.</li>
 *   <li>{@link #KIND_PUBLISH}: one {@code Bus.publish}; the host sends REQUEST(n) when the bus requests values, the
 *       client answers with at most n VALUEs, then COMPLETE/FAIL; the host ends with DONE/ERROR.</li>
 *   <li>{@link #KIND_PUBLICATION}: one {@code BusPublication}, request/response (offer, flush, isConnected, close).</li>
 * </ul>
 * Values cross as the bytes of the topic's own codec: the client encodes with the topic's codec, the host decodes with
 * the same codec looked up by name in {@link RemoteCodecs}, so the remote bus encodes and decodes exactly as a local one.
 */
final class Wire {
    static final int MAGIC = 0x52424831; // "RBH1"

    static final byte KIND_CONTROL = 1;
    static final byte KIND_SUBSCRIBE = 2;
    static final byte KIND_PUBLISH = 3;
    static final byte KIND_PUBLICATION = 4;

    // control requests
    static final byte OP_NEW_BUS = 1;
    static final byte OP_CLOSE_BUS = 2;
    static final byte OP_STATS = 3;
    static final byte OP_PING = 4;
    static final byte OP_SHUTDOWN = 5;
    // publication requests
    static final byte OP_OFFER = 10;
    static final byte OP_FLUSH = 11;
    static final byte OP_IS_CONNECTED = 12;
    static final byte OP_CLOSE_PUBLICATION = 13;

    // responses
    static final byte RESP_OK = 0;
    static final byte RESP_ERROR = 1;

    // stream messages (subscribe and publish connections)
    static final byte MSG_REQUEST = 1;
    static final byte MSG_CANCEL = 2;
    static final byte MSG_NEXT = 3;
    static final byte MSG_ERROR = 4;
    static final byte MSG_COMPLETE = 5;
    static final byte MSG_VALUE = 6;
    static final byte MSG_DONE = 7;
    static final byte MSG_FAIL = 8;
    static final byte MSG_SUBSCRIBED = 9;

    private Wire() {
    }

    static void writeTopic(final DataOutputStream out, final Topic<?> topic) throws IOException {
        out.writeUTF(topic.name());
        out.writeByte(topic.delivery().ordinal());
        out.writeInt(topic.maxMessageLength());
        out.writeUTF(topic.codec().name());
        out.writeBoolean(topic.timestamps());
        out.writeInt(topic.lastValueMaxKeys()); // 0: no last-value cache
        if (topic.lastValueMaxKeys() > 0) {
            final byte[] key = serialized(topic.lastValueKey(), "the last-value key", "ToLongFunction<T>");
            out.writeInt(key.length);
            out.write(key);
        }
    }

    static Topic<Object> readTopic(final DataInputStream in, final RemoteCodecs codecs) throws IOException {
        final String name = in.readUTF();
        final Delivery delivery = Delivery.values()[in.readUnsignedByte()];
        final int max = in.readInt();
        final Codec<Object> codec = codecs.byName(in.readUTF());
        final Topic<Object> sized = Topic.of(name, codec, delivery).withMaxMessageLength(max);
        final Topic<Object> topic = in.readBoolean() ? sized : sized.withoutTimestamps();
        final int maxKeys = in.readInt();
        if (maxKeys == 0) {
            return topic;
        }
        @SuppressWarnings("unchecked")
        final ToLongFunction<Object> key = (ToLongFunction<Object>) readObject(in.readNBytes(in.readInt()), "last-value key");
        return topic.withLastValueCache(key, maxKeys);
    }

    /**
     * Writes the options; the conflation key travels as a serialized object, so it must be {@link Serializable} (e.g. a
     * serializable lambda) and its class must be on the host's class path.
     */
    static void writeOptions(final DataOutputStream out, final SubscribeOptions<?> options) throws IOException {
        out.writeByte(options.policy().ordinal());
        out.writeInt(options.bufferSize());
        out.writeInt(options.ringSize());
        final Function<?, ?> key = options.conflationKey();
        if (key == null) {
            out.writeInt(-1);
        } else {
            final byte[] bytes = serializedKey(key);
            out.writeInt(bytes.length);
            out.write(bytes);
        }
    }

    /** @return the serialized conflation key; fails clearly if it cannot cross to the host */
    static byte[] serializedKey(final Function<?, ?> key) {
        return serialized(key, "the conflation key", "Function<T, K>");
    }

    /** @return the serialized function; fails clearly if it cannot cross to the host */
    static byte[] serialized(final Object key, final String what, final String type) {
        if (!(key instanceof Serializable)) {
            throw new UnsupportedOperationException(what + " " + key + " is not Serializable, so the remote bus host cannot apply "
                + "it: use a serializable lambda, e.g. (" + type + " & Serializable) MyClass::key, whose class is on the host's class path");
        }
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(key);
        } catch (final IOException ex) {
            throw new UnsupportedOperationException(what + " " + key + " cannot be serialized for the remote bus host: " + ex, ex);
        }
        return bytes.toByteArray();
    }

    /** A test tool on a private lab network: the only objects read are the TCK's own key functions. */
    private static Object readObject(final byte[] bytes, final String what) throws IOException {
        try (ObjectInputStream objects = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
            return objects.readObject();
        } catch (final ClassNotFoundException ex) {
            throw new IOException(what + " class not on the bus host's class path: " + ex.getMessage(), ex);
        }
    }

    @SuppressWarnings("unchecked")
    static SubscribeOptions<Object> readOptions(final DataInputStream in) throws IOException {
        final SlowConsumerPolicy policy = SlowConsumerPolicy.values()[in.readUnsignedByte()];
        final int bufferSize = in.readInt();
        final int ringSize = in.readInt();
        final int keyLength = in.readInt();
        Function<Object, Object> key = null;
        if (keyLength >= 0) {
            final byte[] bytes = in.readNBytes(keyLength);
            // a test tool on a private lab network: the only objects read are the TCK's own conflation keys
            try (ObjectInputStream objects = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
                key = (Function<Object, Object>) objects.readObject();
            } catch (final ClassNotFoundException ex) {
                throw new IOException("conflation key class not on the bus host's class path: " + ex.getMessage(), ex);
            }
        }
        return new SubscribeOptions<>(policy, bufferSize, key, ringSize);
    }

    static void writeStats(final DataOutputStream out, final BusStats stats) throws IOException {
        out.writeUTF(stats.transport());
        out.writeInt(stats.subscriptions().size());
        for (final SubscriptionStats s : stats.subscriptions()) {
            out.writeUTF(s.topic());
            out.writeLong(s.framesReceived());
            out.writeLong(s.messagesDelivered());
            out.writeLong(s.malformedFrames());
            out.writeLong(s.gapMessages());
            out.writeLong(s.droppedBySubscriber());
            out.writeLong(s.duplicates());
            out.writeInt(s.ringCapacity());
            out.writeLong(s.ringFree());
        }
        out.writeLong(stats.messagesPublished());
        out.writeLong(stats.droppedNotConnected());
        out.writeInt(stats.transportCounters().size());
        for (final Map.Entry<String, Long> e : stats.transportCounters().entrySet()) {
            out.writeUTF(e.getKey());
            out.writeLong(e.getValue());
        }
    }

    static BusStats readStats(final DataInputStream in) throws IOException {
        final String transport = in.readUTF();
        final int n = in.readInt();
        final List<SubscriptionStats> subs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            subs.add(new SubscriptionStats(in.readUTF(), in.readLong(), in.readLong(), in.readLong(), in.readLong(), in.readLong(),
                in.readLong(), in.readInt(), in.readLong()));
        }
        final long published = in.readLong();
        final long droppedNotConnected = in.readLong();
        final int m = in.readInt();
        final Map<String, Long> counters = new LinkedHashMap<>();
        for (int i = 0; i < m; i++) {
            counters.put(in.readUTF(), in.readLong());
        }
        return new BusStats(transport, List.copyOf(subs), published, droppedNotConnected, Map.copyOf(counters));
    }

    /** Writes a throwable as its class name, whether it is a {@link BusException}, and its message. */
    static void writeError(final DataOutputStream out, final Throwable error) throws IOException {
        out.writeUTF(error.getClass().getName());
        out.writeBoolean(error instanceof BusException);
        final String message = String.valueOf(error.getMessage());
        out.writeUTF(message.length() > 8000 ? message.substring(0, 8000) : message);
    }

    /**
     * Reads a throwable written by {@link #writeError} and rebuilds the same class when it is on this side's class path
     * with a {@code (String)} constructor, so {@code assertInstanceOf(MessageTooLargeException.class, ...)} means the same
     * for a remote bus. Otherwise: a {@link BusException} if the original was one, else an {@link IllegalStateException},
     * both naming the original class.
     */
    static Throwable readError(final DataInputStream in) throws IOException {
        final String className = in.readUTF();
        final boolean busException = in.readBoolean();
        final String message = in.readUTF();
        final String text = "[from the bus host] " + message;
        try {
            final Class<?> type = Class.forName(className, false, Wire.class.getClassLoader());
            if (Throwable.class.isAssignableFrom(type)) {
                final Constructor<?> ctor = type.getConstructor(String.class);
                return (Throwable) ctor.newInstance(text);
            }
        } catch (final ReflectiveOperationException | LinkageError ignored) {
            // fall through to a generic type that still says what it was
        }
        return busException ? new BusException(className + ": " + text) : new IllegalStateException(className + ": " + text);
    }

    static <T> byte[] encode(final Codec<T> codec, final T value) {
        final byte[] bytes = new byte[codec.encodedLength(value)];
        codec.encode(value, new UnsafeBuffer(bytes), 0);
        return bytes;
    }

    static <T> T decode(final Codec<T> codec, final byte[] bytes) {
        return codec.decode(new UnsafeBuffer(bytes), 0, bytes.length);
    }

    static void writeBytes(final DataOutputStream out, final byte[] bytes) throws IOException {
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    static byte[] readBytes(final DataInputStream in) throws IOException {
        final int length = in.readInt();
        if (length < 0 || length > Topic.MAX_MESSAGE_LENGTH_LIMIT) {
            throw new IOException("bad value length " + length);
        }
        return in.readNBytes(length);
    }
}
