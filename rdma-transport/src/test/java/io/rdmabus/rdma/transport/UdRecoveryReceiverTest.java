package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.Delivery;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.TopicDescriptor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The subscriber side of UD gap recovery on a host, as pure sequence logic: what it delivers (in order, once), what it
 * NAKs, what it gives up at the time bound, and how it counts. The NAK goes to a recording target here; over rdma it is
 * the publisher's RC connection (UdRecoveryTwoGuestRxeTest runs the whole path under netem loss). The clock of the time
 * bound is passed in ({@code onDuty(local, now)}), so nothing here waits.
 */
class UdRecoveryReceiverTest {
    private static final int TOPIC = 31;
    private static final int SESSION = 0x5E55;
    private static final long SOURCE = UdRecoveryReceiver.addressKey(0x0A4D000C, 0x77);
    private static final long BOUND_NS = TimeUnit.MILLISECONDS.toNanos(50);

    private final List<Long> delivered = new ArrayList<>();
    private final List<String> naks = new ArrayList<>();
    private final UnsafeBuffer frame = new UnsafeBuffer(new byte[256]);
    private final Int2ObjectHashMap<RdmaSubscription[]> local = new Int2ObjectHashMap<>();
    private final RdmaSubscription[] subs = {
        new RdmaSubscription(new TopicDescriptor("nak", TOPIC, Delivery.BEST_EFFORT, 1000), new AcceptingSink() {
            @Override
            public int onFrame(final DirectBuffer buffer, final int offset, final int length) {
                return CONTINUE;
            }
        }, 1016, s -> { })
    };
    private boolean live = true;

    private UdRecoveryReceiver receiver(final int window) {
        local.put(TOPIC, subs);
        UdRecoveryReceiver r = new UdRecoveryReceiver(window, BOUND_NS, 1016,
            (s, buffer, offset, length) -> delivered.add(FrameHeader.sequence(buffer, offset)));
        r.onPeer(SOURCE, new UdRecoveryReceiver.NakTarget() {
            @Override
            public boolean live() {
                return live;
            }

            @Override
            public void nak(final int topicId, final int session, final long first, final int count) {
                naks.add(topicId + "/" + session + ":" + first + "+" + count);
            }
        });
        return r;
    }

    /** A UD datagram of {@code seq}: the receiver took it (true) or the caller delivers it at once (false, recorded here). */
    private boolean udp(final UdRecoveryReceiver r, final long seq) {
        FrameHeader.write(frame, 0, FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, TOPIC, SESSION, seq, 0);
        boolean taken = r.onDatagram(TOPIC, subs, frame, 0, FrameHeader.LENGTH + 8, SOURCE, local);
        if (!taken) {
            delivered.add(seq);
        }
        return taken;
    }

    private void recovered(final UdRecoveryReceiver r, final long seq) {
        FrameHeader.write(frame, 0, FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, TOPIC, SESSION, seq, 0);
        r.onRecovered(TOPIC, frame, 0, FrameHeader.LENGTH + 8, local);
    }

    @Test
    void aGapIsHeldNakedOnceAndFilledInOrderFromRecoveredFrames() {
        UdRecoveryReceiver r = receiver(64);
        assertFalse(udp(r, 0));
        assertFalse(udp(r, 1));
        assertTrue(udp(r, 4), "2 and 3 are missing: 4 is held");
        assertTrue(udp(r, 5));
        assertEquals(List.of(TOPIC + "/" + SESSION + ":2+2"), naks);
        assertTrue(udp(r, 8), "a second gap while holding");
        assertEquals(List.of(TOPIC + "/" + SESSION + ":2+2", TOPIC + "/" + SESSION + ":6+2"), naks, "one NAK per gap");
        assertEquals(List.of(0L, 1L), delivered);
        recovered(r, 3);
        assertEquals(List.of(0L, 1L), delivered, "3 waits for 2");
        recovered(r, 2);
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L), delivered);
        recovered(r, 3);
        assertFalse(udp(r, 4), "below what was delivered: to the bus, which drops it as a duplicate, as without recovery");
        delivered.remove(delivered.size() - 1);
        recovered(r, 7);
        recovered(r, 6);
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L), delivered);
        assertFalse(r.holdingAny());
        assertFalse(udp(r, 9), "in order again: straight through");
        assertEquals(4, r.gapFrames());
        assertEquals(4, r.recovered());
        assertEquals(0, r.givenUp());
        assertEquals(2, r.naksSent());
    }

    @Test
    void whatIsNotRecoveredWithinTheBoundIsGivenUpAndTheRestDeliveredInOrder() {
        UdRecoveryReceiver r = receiver(64);
        udp(r, 10);
        udp(r, 13); // 11, 12 missing
        udp(r, 14);
        long start = System.nanoTime();
        assertEquals(0, r.onDuty(local, start), "within the bound nothing moves");
        recovered(r, 12);
        assertEquals(List.of(10L), delivered);
        r.onDuty(local, start + 2 * BOUND_NS);
        assertEquals(List.of(10L, 12L, 13L, 14L), delivered, "11 given up: the bus sees 10 then 12 and reports one lost");
        assertEquals(1, r.givenUp());
        assertEquals(1, r.recovered());
        recovered(r, 11);
        assertEquals(List.of(10L, 12L, 13L, 14L), delivered, "recovered after the bound: dropped, never out of order");
        assertEquals(r.gapFrames(), r.recovered() + r.givenUp() + r.notRecoverable() + r.filledByUd());
    }

    @Test
    void aGapAsLongAsTheWindowOrWithoutALivePublisherIsNotHeld() {
        UdRecoveryReceiver r = receiver(8);
        udp(r, 0);
        assertFalse(udp(r, 9), "8 missing: not less than the window");
        live = false;
        assertFalse(udp(r, 11), "no live connection to NAK on");
        assertEquals(List.of(0L, 9L, 11L), delivered);
        assertEquals(List.of(), naks);
        assertEquals(9, r.notRecoverable());
    }

    @Test
    void aFrameBeyondTheHoldGivesUpTheOldestMissingOnes() {
        UdRecoveryReceiver r = receiver(8);
        udp(r, 0);
        udp(r, 2); // 1 missing
        udp(r, 5); // 3, 4 missing
        assertTrue(udp(r, 10), "10 - 1 >= 8: 1 is given up and 2 delivered; 3 and 4 still fit the hold");
        assertEquals(List.of(0L, 2L), delivered);
        assertEquals(1, r.givenUp());
        assertTrue(udp(r, 12), "12 - 3 >= 8: 3 and 4 are given up, 5 delivered");
        assertEquals(List.of(0L, 2L, 5L), delivered);
        assertEquals(3, r.givenUp());
        assertTrue(r.holdingAny(), "6..9 and 11 still missing");
        for (long late : new long[] {6, 7, 8, 9, 11}) {
            assertTrue(udp(r, late));
        }
        assertEquals(List.of(0L, 2L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L), delivered);
        assertEquals(5, r.filledByUd(), "late datagrams fill the hold too");
        assertFalse(r.holdingAny());
        assertEquals(r.gapFrames(), r.recovered() + r.givenUp() + r.notRecoverable() + r.filledByUd());
    }
}
