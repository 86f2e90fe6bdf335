package io.rdmabus.rdma.transport;

import io.rdmabus.rdma.verbs.SendRequestList;
import io.rdmabus.rdma.verbs.SendRequestListFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The UD send ring's selective signalling and in-order release, on the host: the {@code ibv_post_send} is a recorder
 * of what would have been posted (wr_id and signalled flag of each request), the completions are fed back as the
 * poller would hand them over. The rxe lab covers the same with a device ({@code UdRxeTest}).
 */
class UdSendRingTest {
    private final AtomicInteger outstanding = new AtomicInteger();
    private final UdSendRing ring = new UdSendRing(UdEndpoint.SEND_QUEUE_DEPTH, new AtomicReferenceArray<>(16), outstanding);
    private final SendRequestList list = new SendRequestList(8);
    /** Post sequence numbers of the signalled requests, in post order. */
    private final List<Long> signalled = new ArrayList<>();
    private long posted;

    private final UdSendRing.Poster recorder = l -> {
        for (int i = 0; i < l.count(); i++) {
            assertEquals(posted, WorkRequestId.sequenceBits(l.wrId(i)), "wr_ids carry the post sequence");
            if (l.signaled(i)) {
                signalled.add(posted);
            }
            posted++;
        }
        return 0;
    };

    @AfterEach
    void close() {
        list.close();
    }

    private final long[] entries = new long[8];

    /** Claims queue places and posts one frame of {@code datagrams} datagrams, as UdPublication does. */
    private int postFrame(final UdSendRing.Poster poster, final int datagrams, final boolean holdsSlot) {
        outstanding.addAndGet(datagrams);
        list.clear();
        addFrame(datagrams, holdsSlot ? UdSendRing.slotEntry(1, 0) : UdSendRing.NO_SLOT);
        final int n = ring.post(poster, list, entries);
        outstanding.addAndGet(n - datagrams); // commit gives back the places of what was not posted
        return n;
    }

    private void addFrame(final int datagrams, final long entry) {
        for (int i = 0; i < datagrams; i++) {
            entries[list.count()] = entry;
            SendRequestListFixture.addInlineUd(list, 1);
        }
    }

    @Test
    void inlineSendsAreSignalledOnceInTheIntervalAndTheUnsignalledTailStaysAQuarterOfTheQueue() {
        assertTrue(UdSendRing.SIGNAL_INTERVAL > 32 && UdSendRing.SIGNAL_INTERVAL <= UdEndpoint.SEND_QUEUE_DEPTH / 4,
                "few completions (each wakes the poller), and the tail a quarter of the queue at most: " + UdSendRing.SIGNAL_INTERVAL);
        int frames = 1000;
        for (int f = 0; f < frames; f++) {
            assertEquals(2, postFrame(recorder, 2, false), "frame " + f + " posted whole");
            // a completion comes for each signalled send; release as the poller would, at once
            while (!signalled.isEmpty()) {
                ring.onCompletion(signalled.removeFirst());
                assertTrue(ring.unreleased() < UdSendRing.SIGNAL_INTERVAL, "the tail after a completion: " + ring.unreleased());
            }
            assertEquals(ring.unreleased(), outstanding.get(), "every counted place is a posted, unreleased send");
        }
        long total = 2L * frames;
        assertEquals(total, posted);
        assertEquals(total % UdSendRing.SIGNAL_INTERVAL, ring.unreleased(), "released up to the last signalled send");
    }

    @Test
    void signalledSendsComeExactlyEveryIntervalAndAFrameHoldingItsSlotSignalsItsLastDatagram() {
        for (int f = 0; f < UdSendRing.SIGNAL_INTERVAL; f++) {
            postFrame(recorder, 1, false);
        }
        assertEquals(List.of((long) UdSendRing.SIGNAL_INTERVAL - 1), signalled, "the interval's last send only");
        signalled.clear();
        postFrame(recorder, 3, false);
        postFrame(recorder, 3, true); // reads its slot at send time: the slot returns with this completion
        long last = posted - 1;
        assertEquals(List.of(last), signalled, "the slot-holding frame's last datagram, nothing else");
        ring.onCompletion(last);
        assertEquals(0, ring.unreleased(), "one completion releases every send posted before it");
        assertEquals(0, outstanding.get());
        signalled.clear();
        for (int f = 0; f < UdSendRing.SIGNAL_INTERVAL - 1; f++) {
            postFrame(recorder, 1, false);
        }
        assertTrue(signalled.isEmpty(), "the count restarts after a signalled send: " + signalled);
        postFrame(recorder, 1, false);
        assertEquals(List.of(posted - 1), signalled);
    }

    /** A batch's chain: frames of one publication from several slots, some inline, posted with one call. */
    @Test
    void aChainOfFramesSignalsTheLastDatagramOfEachSlotHoldingFrameAndOneCompletionReleasesItAll() {
        list.clear();
        addFrame(2, UdSendRing.NO_SLOT); // 0, 1: inline
        addFrame(2, UdSendRing.slotEntry(1, 3)); // 2, 3: read slot 3 at send time
        addFrame(1, UdSendRing.NO_SLOT); // 4
        addFrame(2, UdSendRing.slotEntry(1, 4)); // 5, 6: slot 4
        addFrame(1, UdSendRing.NO_SLOT); // 7
        outstanding.addAndGet(8);
        assertEquals(8, ring.post(recorder, list, entries), "one post, the whole chain");
        assertEquals(List.of(3L, 6L), signalled, "each slot-holding frame's last datagram, nothing else");
        ring.onCompletion(6);
        assertEquals(1, ring.unreleased(), "released up to the completed send; the inline tail waits for a later one");
        assertEquals(1, outstanding.get());
    }

    @Test
    void aStaleOrRepeatedCompletionReleasesNothingTwice() {
        for (int f = 0; f < 2 * UdSendRing.SIGNAL_INTERVAL; f++) {
            postFrame(recorder, 1, false);
        }
        assertEquals(2, signalled.size());
        ring.onCompletion(signalled.get(1));
        assertEquals(0, ring.unreleased());
        ring.onCompletion(signalled.get(0)); // older than what was released: ignored
        ring.onCompletion(signalled.get(1)); // the same again: ignored
        assertEquals(0, ring.unreleased());
        assertEquals(0, outstanding.get(), "no place given back twice");
    }

    @Test
    void aRefusedPostRecordsNothingAndTheNextPostContinuesTheSequence() {
        UdSendRing.Poster refusing = l -> 12; // ENOMEM, bad_wr naming none of the list: nothing went out
        assertEquals(0, postFrame(refusing, 2, false));
        assertEquals(0, ring.unreleased());
        assertEquals(0, outstanding.get(), "the refused frame's places are given back");
        for (int f = 0; f < UdSendRing.SIGNAL_INTERVAL; f++) {
            assertEquals(1, postFrame(recorder, 1, false));
        }
        assertEquals(List.of((long) UdSendRing.SIGNAL_INTERVAL - 1), signalled, "the refused post used no sequence number");
        assertFalse(ring.unreleased() == 0);
    }
}
