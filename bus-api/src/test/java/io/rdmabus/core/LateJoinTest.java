package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Received;
import io.rdmabus.Topic;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The late-join state machine (LateJoin) fed directly with live messages, snapshot parts built by a real
 * LastValueCache, and ticks: the seam rule for each order of arrival. The TCK case runs it over every transport.
 */
class LateJoinTest {
    private static final int KEYS = 4;
    private static final long KEY_SCALE = 1_000_000;
    private final Topic<Long> topic = Topic.of("lvc.unit", TestCodecs.LONG, Delivery.RELIABLE).withLastValueCache(v -> v / KEY_SCALE, 16);
    private final Requests requests = new Requests();
    private final LateJoin<Long> join = new LateJoin<>(topic, requests);

    @Test
    void snapshotThenBufferedLiveAfterItsLastSequence() {
        final LastValueCache cache = publisher(7, 99);
        assertEquals(List.of(), join.onEvent(live(7, 98)), "buffered until the snapshot");
        assertEquals(List.of(), join.onEvent(live(7, 99)));
        assertEquals(1, requests.count(), "a session seen mid-stream asks at once");
        publish(cache, 100);
        assertEquals(List.of(), join.onEvent(live(7, 100)));
        final List<Received<Long>> out = join.onEvent(part(cache.snapshot(requests.lastId())));
        assertEquals(List.of(97L, 98L, 99L, 100L), sequences(out), "the snapshot (one per key, publish order); nothing buffered is newer");
        assertEquals(List.of(101L), sequences(join.onEvent(live(7, 101))), "then live from the next sequence");
        assertEquals(List.of(), join.onEvent(live(7, 100)), "a covered message is not delivered twice");
    }

    @Test
    void aSnapshotOlderThanTheLiveStreamIsAskedForAgain() {
        final LastValueCache cache = publisher(7, 50);
        final List<byte[]> old = cache.snapshot(0);
        join.onEvent(live(7, 60)); // the stream already shows 60: a snapshot at 50 misses 51..59
        final long id = requests.lastId();
        assertEquals(List.of(), join.onEvent(part(withRequestId(old, id))), "a snapshot the live stream does not continue");
        assertEquals(2, requests.count(), "asked again");
        for (long s = 51; s <= 61; s++) {
            publish(cache, s);
        }
        join.onEvent(live(7, 61));
        final List<Received<Long>> out = join.onEvent(part(cache.snapshot(requests.lastId())));
        assertEquals(List.of(58L, 59L, 60L, 61L), sequences(out));
        assertEquals(List.of(62L), sequences(join.onEvent(live(7, 62))));
    }

    @Test
    void aSnapshotBeforeAnyLiveMessageIsHeldUntilTheStreamProvesIt() {
        final LastValueCache cache = publisher(7, 30);
        tick();
        final List<Received<Long>> held = join.onEvent(part(cache.snapshot(requests.lastId())));
        assertEquals(List.of(), held, "held: no live message yet");
        assertEquals(List.of(27L, 28L, 29L, 30L, 31L), sequences(join.onEvent(live(7, 31))), "proven by sequence 31");
    }

    @Test
    void aHeldSnapshotGivesWayToAStreamSeenFromItsStart() {
        final LastValueCache cache = publisher(7, 30);
        tick();
        join.onEvent(part(cache.snapshot(requests.lastId())));
        assertEquals(List.of(0L), sequences(join.onEvent(live(7, 0))), "the whole stream, not the snapshot");
        assertEquals(List.of(1L), sequences(join.onEvent(live(7, 1))));
    }

    @Test
    void aHeldSnapshotThatTheStreamDoesNotContinueIsAskedForAgain() {
        final LastValueCache cache = publisher(7, 30);
        tick();
        join.onEvent(part(cache.snapshot(requests.lastId())));
        final int asked = requests.count();
        assertEquals(List.of(), join.onEvent(live(7, 35)), "31..34 were sent before this subscription was connected");
        assertEquals(asked + 1, requests.count());
        for (long s = 31; s <= 35; s++) {
            publish(cache, s);
        }
        assertEquals(List.of(32L, 33L, 34L, 35L), sequences(join.onEvent(part(cache.snapshot(requests.lastId())))));
    }

    @Test
    void aQuietPublishersSnapshotIsDeliveredAfterAWhileAndRepairedIfTheStreamShowsAGap() {
        final LastValueCache cache = publisher(7, 30);
        tick();
        join.onEvent(part(cache.snapshot(requests.lastId())));
        List<Received<Long>> out = List.of();
        for (int i = 0; i < LateJoin.HOLD_TICKS && out.isEmpty(); i++) {
            out = tick();
        }
        assertEquals(List.of(27L, 28L, 29L, 30L), sequences(out), "a quiet publisher's snapshot");
        assertEquals(List.of(), join.onEvent(live(7, 33)), "31 and 32 missed: asks again");
        publish(cache, 31);
        publish(cache, 32);
        publish(cache, 33);
        assertEquals(List.of(31L, 32L, 33L), sequences(join.onEvent(part(cache.snapshot(requests.lastId())))),
            "only the values newer than those delivered, then the buffered live message is covered");
        assertEquals(List.of(34L), sequences(join.onEvent(live(7, 34))));
    }

    @Test
    void aSessionSeenFromItsStartNeedsNoSnapshotAndOthersAreIndependent() {
        assertEquals(List.of(0L), sequences(join.onEvent(live(8, 0))));
        final LastValueCache other = publisher(9, 10);
        join.onEvent(live(9, 11));
        publish(other, 11);
        assertEquals(List.of(1L), sequences(join.onEvent(live(8, 1))), "session 8 is not held up by session 9");
        final List<Received<Long>> out = join.onEvent(part(other.snapshot(requests.lastId())));
        assertEquals(List.of(8L, 9L, 10L, 11L), sequences(out));
        assertTrue(out.stream().allMatch(r -> r.sessionId() == 9 && r.lostBefore() == 0));
        final LastValueCache eight = publisher(8, 1);
        assertEquals(List.of(), join.onEvent(part(eight.snapshot(requests.lastId()))), "a session seen from its start ignores snapshots");
    }

    @Test
    void aSnapshotInSeveralPartsAndRepliesToOtherSubscribersRequests() {
        final Topic<byte[]> big = Topic.of("lvc.big", TestCodecs.BYTES, Delivery.RELIABLE).withLastValueCache(v -> v[0], 16);
        final LateJoin<byte[]> bigJoin = new LateJoin<>(big, requests);
        final LastValueCache cache = new LastValueCache(big, 5);
        final byte[] payload = new byte[100 * 1024];
        for (int k = 0; k < 6; k++) {
            payload[0] = (byte) k;
            cache.update(k, new UnsafeBuffer(payload), 0, payload.length, k + 10, 0, k + 10);
        }
        assertEquals(List.of(), bigJoin.onEvent(new Received<>(payload, 5, 16, 0, 0)), "buffered");
        final List<byte[]> parts = cache.snapshot(requests.lastId());
        assertTrue(parts.size() >= 3, "600 KiB in parts of 256 KiB: " + parts.size());
        for (final byte[] foreign : withRequestId(parts, 12345)) {
            assertEquals(List.of(), bigJoin.onEvent(new LateJoin.Part(new Received<>(foreign, 1, 0, 0, 0))), "another subscriber's request");
        }
        for (int i = 0; i < parts.size() - 1; i++) {
            assertEquals(List.of(), bigJoin.onEvent(new LateJoin.Part(new Received<>(parts.get(i), 1, 0, 0, 0))), "part " + i + " alone");
        }
        final List<Received<byte[]>> out = bigJoin.onEvent(new LateJoin.Part(new Received<>(parts.get(parts.size() - 1), 1, 0, 0, 0)));
        assertEquals(List.of(10L, 11L, 12L, 13L, 14L, 15L, 16L), out.stream().map(Received::sequence).toList(),
            "the six values, then the buffered live message");
        assertEquals(List.of(), bigJoin.onEvent(new Received<>(payload, 5, 16, 0, 0)), "delivered once");
    }

    // ---------------------------------------------------------------------------------------------------------- helpers

    /** A publication's cache after sequences 0..last, key = sequence mod KEYS. */
    private static LastValueCache publisher(final int sessionId, final long last) {
        final LastValueCache cache = new LastValueCache(Topic.of("lvc.unit", TestCodecs.LONG, Delivery.RELIABLE)
            .withLastValueCache(v -> v / KEY_SCALE, 16), sessionId);
        for (long s = 0; s <= last; s++) {
            publish(cache, s);
        }
        return cache;
    }

    private static void publish(final LastValueCache cache, final long sequence) {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[8]);
        buffer.putLong(0, value(sequence));
        cache.update(sequence % KEYS, buffer, 0, 8, sequence, 0, sequence);
    }

    private static long value(final long sequence) {
        return (sequence % KEYS) * KEY_SCALE + sequence;
    }

    private static Received<Long> live(final int sessionId, final long sequence) {
        return new Received<>(value(sequence), sessionId, sequence, 0, 0);
    }

    /** Feeds every part but the last; @return the last part as an event. */
    private Object part(final List<byte[]> parts) {
        for (int i = 0; i < parts.size() - 1; i++) {
            join.onEvent(new LateJoin.Part(new Received<>(parts.get(i), 1, 0, 0, 0)));
        }
        return new LateJoin.Part(new Received<>(parts.get(parts.size() - 1), 1, 0, 0, 0));
    }

    private static List<byte[]> withRequestId(final List<byte[]> parts, final long requestId) {
        final List<byte[]> copy = new ArrayList<>();
        for (final byte[] p : parts) {
            final byte[] c = p.clone();
            new UnsafeBuffer(c).putLong(0, requestId);
            copy.add(c);
        }
        return copy;
    }

    private List<Received<Long>> tick() {
        return join.onEvent(0L);
    }

    private static List<Long> sequences(final List<? extends Received<?>> list) {
        return list.stream().map(Received::sequence).toList();
    }

    /** The join's request publication: takes every request and keeps it. */
    private static final class Requests implements BusPublication<byte[]> {
        private final List<byte[]> offered = new ArrayList<>();

        @Override
        public int offer(final byte[] value) {
            offered.add(value.clone());
            return PublishStatus.OK;
        }

        int count() {
            return offered.size();
        }

        long lastId() {
            return new UnsafeBuffer(offered.get(offered.size() - 1)).getLong(0);
        }

        @Override
        public int flush() {
            return PublishStatus.OK;
        }

        @Override
        public boolean isConnected() {
            return true;
        }

        @Override
        public int sessionId() {
            return 1;
        }

        @Override
        public Topic<byte[]> topic() {
            return LastValueProtocol.requestTopic(Topic.of("lvc.unit", TestCodecs.LONG, Delivery.RELIABLE));
        }

        @Override
        public void close() {
        }
    }
}
