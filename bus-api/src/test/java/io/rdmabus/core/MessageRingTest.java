package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import com.lmax.disruptor.dsl.ProducerType;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** A ring is empty once the delivering side has taken every published or skipped slot, as either side asks. */
class MessageRingTest {
    private final UnsafeBuffer message = new UnsafeBuffer(new byte[] {1, 2, 3});

    @Test
    void theProducersViewOfEmptinessMatchesTheRings() throws Exception {
        final MessageRing ring = new MessageRing(ProducerType.SINGLE, 8, null);
        assertEmpty(ring, true, "a new ring");

        final long first = ring.tryClaim();
        assertEmpty(ring, true, "a claimed slot not yet published");
        ring.publish(first, message, 0, 3, 7, 0, 0, 0);
        assertEmpty(ring, false, "a published message not yet taken");
        final long second = ring.tryClaim();
        ring.skip(second);
        assertEmpty(ring, false, "a skipped slot not yet passed over");

        final List<Integer> lengths = new ArrayList<>();
        ring.poll((event, sequence, endOfBatch) -> lengths.add(event.length));
        assertEquals(List.of(3, -1), lengths, "the published message, then the skipped slot");
        assertEmpty(ring, true, "everything taken");

        for (int i = 0; i < 20; i++) { // round the ring twice and a half
            final long slot = ring.tryClaim();
            ring.publish(slot, message, 0, 3, 7, i + 1, 0, 0);
            assertEmpty(ring, false, "message " + i + " not yet taken");
            ring.poll((event, sequence, endOfBatch) -> true);
            assertEmpty(ring, true, "message " + i + " taken");
        }
    }

    @Test
    void aMultiProducerRingIsEmptyWhenEverythingPublishedWasTaken() throws Exception {
        final MessageRing ring = new MessageRing(ProducerType.MULTI, 8, null);
        assertEmpty(ring, true, "a new ring");
        ring.publish(ring.tryClaim(), message, 0, 3, 7, 0, 0, 0);
        assertEmpty(ring, false, "a published message not yet taken");
        final long second = ring.tryClaim();
        ring.skip(second);
        assertEmpty(ring, false, "a skipped slot not yet passed over");
        ring.poll((event, sequence, endOfBatch) -> true);
        assertEmpty(ring, true, "everything taken");
    }

    private static void assertEmpty(final MessageRing ring, final boolean empty, final String when) {
        assertEquals(empty, ring.isEmpty(), "isEmpty(): " + when);
        assertEquals(empty, ring.isDrainedForProducer(), "isDrainedForProducer(): " + when);
        assertEquals(empty, ring.isEmpty(), "isEmpty() after isDrainedForProducer(): " + when);
    }
}
