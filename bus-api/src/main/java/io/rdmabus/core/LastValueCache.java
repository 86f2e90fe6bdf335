package io.rdmabus.core;

import java.util.ArrayList;
import java.util.List;

import io.rdmabus.Topic;

import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One publication's last-value cache: the last encoded message per key and the last sequence sent, updated by the
 * publication's token owner after each message it takes and read by the bus's late-join server ({@link LastValueServer})
 * for a snapshot. Both under this object's lock (uncontended but for a snapshot), so a snapshot and its "last sequence"
 * always agree. A key's buffer is reused by every later message of that key: no allocation per message once the keys
 * are known.
 */
final class LastValueCache {
    private static final Logger LOG = LoggerFactory.getLogger(LastValueCache.class);

    private final Topic<?> topic;
    private final int sessionId;
    private final int maxKeys;
    private final Long2ObjectHashMap<Entry> entries = new Long2ObjectHashMap<>();
    private long lastSequence = -1;
    private long keysRefused;

    private static final class Entry {
        final ExpandableArrayBuffer payload = new ExpandableArrayBuffer(64);
        final long key;
        int length;
        long sequence;
        long timestampNs;

        Entry(final long key) {
            this.key = key;
        }
    }

    LastValueCache(final Topic<?> topic, final int sessionId) {
        this.topic = topic;
        this.sessionId = sessionId;
        this.maxKeys = topic.lastValueMaxKeys();
    }

    int sessionId() {
        return sessionId;
    }

    /**
     * A message the publication took.
     *
     * @param lastFrameSequence the sequence of its last frame (the publication's next sequence minus one)
     */
    synchronized void update(final long key, final DirectBuffer src, final int offset, final int length, final long sequence,
                             final long timestampNs, final long lastFrameSequence) {
        lastSequence = lastFrameSequence;
        Entry entry = entries.get(key);
        if (entry == null) {
            if (entries.size() >= maxKeys) {
                if (keysRefused++ == 0) {
                    LOG.warn("topic {}: last-value cache full ({} keys, Topic.withLastValueCache maxKeys): key {} and later new keys are "
                        + "not kept, so a late joiner does not get them from this publication", topic.name(), maxKeys, key);
                }
                return;
            }
            entry = new Entry(key);
            entries.put(key, entry);
        }
        entry.payload.putBytes(0, src, offset, length);
        entry.length = length;
        entry.sequence = sequence;
        entry.timestampNs = timestampNs;
    }

    /** @return the snapshot for {@code requestId} as parts (at least one), entries in sequence order */
    synchronized List<byte[]> snapshot(final long requestId) {
        final List<Entry> sorted = new ArrayList<>(entries.values());
        sorted.sort((a, b) -> Long.compare(a.sequence, b.sequence));
        final List<byte[]> parts = new ArrayList<>();
        int i = 0;
        do {
            int bytes = LastValueProtocol.PART_HEADER;
            final int first = i;
            while (i < sorted.size()
                && (i == first || bytes + LastValueProtocol.ENTRY_HEADER + sorted.get(i).length <= LastValueProtocol.PART_BYTES)) {
                bytes += LastValueProtocol.ENTRY_HEADER + sorted.get(i).length;
                i++;
            }
            final UnsafeBuffer part = new UnsafeBuffer(new byte[bytes]);
            int offset = LastValueProtocol.PART_HEADER;
            for (int k = first; k < i; k++) {
                final Entry e = sorted.get(k);
                part.putLong(offset, e.key);
                part.putLong(offset + 8, e.sequence);
                part.putLong(offset + 16, e.timestampNs);
                part.putInt(offset + 24, e.length);
                part.putBytes(offset + LastValueProtocol.ENTRY_HEADER, e.payload, 0, e.length);
                offset += LastValueProtocol.ENTRY_HEADER + e.length;
            }
            part.putLong(0, requestId);
            part.putInt(8, sessionId);
            part.putInt(12, topic.topicId());
            part.putLong(16, lastSequence);
            part.putInt(32, i - first);
            parts.add(part.byteArray());
        } while (i < sorted.size());
        for (int p = 0; p < parts.size(); p++) {
            final UnsafeBuffer part = new UnsafeBuffer(parts.get(p));
            part.putInt(24, p);
            part.putInt(28, parts.size());
        }
        return parts;
    }
}
