package io.rdmabus.tck.remote;

import java.util.LinkedHashMap;
import java.util.Map;

import io.rdmabus.Topic;
import io.rdmabus.codec.Codec;
import io.rdmabus.codecs.Codecs;

/**
 * The codecs a topic may use on a remote bus: the bus host recreates each topic by name with the codec registered under
 * the topic codec's {@link Codec#name()}. Both sides must use the same registry. A topic whose codec is not the very
 * instance registered under its name is refused with {@link UnsupportedOperationException} (never approximated, e.g.
 * by carrying raw bytes, which would move decode failures out of the bus and change its counters).
 */
public final class RemoteCodecs {
    private final Map<String, Codec<?>> byName;

    private RemoteCodecs(final Map<String, Codec<?>> byName) {
        this.byName = Map.copyOf(byName);
    }

    /** @return {@code Codecs.utf8()}, {@code Codecs.bytes()} and {@code Codecs.buffer()} (what the TCK uses, and more) */
    public static RemoteCodecs standard() {
        final Map<String, Codec<?>> map = new LinkedHashMap<>();
        for (final Codec<?> c : new Codec<?>[] {Codecs.utf8(), Codecs.bytes(), Codecs.buffer()}) {
            map.put(c.name(), c);
        }
        return new RemoteCodecs(map);
    }

    /**
     * @param codec another shared, stateless codec instance (same on both sides)
     * @return a registry with it added
     */
    public RemoteCodecs with(final Codec<?> codec) {
        final Map<String, Codec<?>> map = new LinkedHashMap<>(byName);
        map.put(codec.name(), codec);
        return new RemoteCodecs(map);
    }

    /** Fails clearly if {@code topic} cannot be recreated on the host. */
    void check(final Topic<?> topic) {
        if (byName.get(topic.codec().name()) != topic.codec()) {
            throw new UnsupportedOperationException("topic " + topic.name() + " uses codec '" + topic.codec().name() + "' ("
                + topic.codec().getClass().getName() + "), which the remote bus host cannot recreate: supported are the instances "
                + byName.keySet() + " of RemoteCodecs (add others with RemoteCodecs.with on both sides)");
        }
    }

    @SuppressWarnings("unchecked")
    Codec<Object> byName(final String name) {
        final Codec<?> codec = byName.get(name);
        if (codec == null) {
            throw new UnsupportedOperationException("the bus host has no codec '" + name + "': it knows " + byName.keySet());
        }
        return (Codec<Object>) codec;
    }
}
