package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_send_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_sge;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The post list writes only what changes per request (through plain stores at the generated layouts' offsets) and
 * keeps its chain linked: read back here through the generated accessors, as the provider reads it, by following
 * {@code next} from the first request to the NULL that ends the chain. Host only: no device, no post.
 */
class SendRequestListTest {
    private static final int SIGNALED = RdmaCm.IBV_SEND_SIGNALED();
    private static final int INLINE = RdmaCm.IBV_SEND_INLINE();
    private static final long REGION = 0x7f00_0000_0000L;
    private static final long REGION_BYTES = 1 << 20;

    /** The chain as the provider walks it: each request's segment, from first() to the NULL next. */
    private static List<MemorySegment> chain(SendRequestList list) {
        List<MemorySegment> out = new ArrayList<>();
        long at = list.first().address();
        while (at != 0 && out.size() <= list.capacity()) {
            MemorySegment w = MemorySegment.ofAddress(at).reinterpret(ibv_send_wr.sizeof());
            out.add(w);
            at = ibv_send_wr.next(w).address();
        }
        return out;
    }

    private static MemorySegment sge(MemorySegment wr) {
        return ibv_send_wr.sg_list(wr).reinterpret(ibv_sge.sizeof());
    }

    private static MemorySegment ud(MemorySegment wr) {
        return ibv_send_wr.wr.ud(ibv_send_wr.wr(wr));
    }

    @Test
    void aRepeatedSingleRequestCarriesEachPostsFieldsAndEndsTheChain() {
        try (SendRequestList list = new SendRequestList(8)) {
            for (int k = 0; k < 5; k++) {
                list.clear();
                list.add(100 + k, REGION, REGION_BYTES, 77, 64L * k, 40 + k, k % 2 == 0, k < 3);
                list.toUd(0x1000, 0xFFFFFF, 0x1234);
                List<MemorySegment> c = chain(list);
                assertEquals(1, c.size(), "one request, next NULL, post " + k);
                MemorySegment w = c.get(0);
                assertEquals(100 + k, ibv_send_wr.wr_id(w));
                assertEquals(RdmaCm.IBV_WR_SEND(), ibv_send_wr.opcode(w));
                assertEquals(1, ibv_send_wr.num_sge(w));
                assertEquals((k % 2 == 0 ? SIGNALED : 0) | (k < 3 ? INLINE : 0), ibv_send_wr.send_flags(w), "flags of post " + k);
                assertEquals(REGION + 64L * k, ibv_sge.addr(sge(w)));
                assertEquals(40 + k, ibv_sge.length(sge(w)));
                assertEquals(77, ibv_sge.lkey(sge(w)));
                assertEquals(0x1000, ibv_send_wr.wr.ud.ah(ud(w)).address());
                assertEquals(0xFFFFFF, ibv_send_wr.wr.ud.remote_qpn(ud(w)));
                assertEquals(0x1234, ibv_send_wr.wr.ud.remote_qkey(ud(w)));
                assertEquals(k % 2 == 0, list.signaled(0));
            }
        }
    }

    @Test
    void listsOfChangingLengthLinkExactlyTheirRequests() {
        try (SendRequestList list = new SendRequestList(6)) {
            int post = 0;
            for (int n : new int[] {3, 1, 6, 2, 1, 5, 6}) {
                list.clear();
                for (int i = 0; i < n; i++) {
                    list.add(post * 10L + i, REGION, REGION_BYTES, 5 + i, 128L * i, 16, false, true);
                    list.toUd(0x2000 + i, 10 + i, 0x55);
                }
                List<MemorySegment> c = chain(list);
                assertEquals(n, c.size(), "a list of " + n + " (post " + post + ") links " + n + " requests");
                for (int i = 0; i < n; i++) {
                    MemorySegment w = c.get(i);
                    assertEquals(post * 10L + i, ibv_send_wr.wr_id(w));
                    assertEquals(post * 10L + i, list.wrId(i));
                    assertEquals(5 + i, ibv_sge.lkey(sge(w)));
                    assertEquals(0x2000 + i, ibv_send_wr.wr.ud.ah(ud(w)).address());
                    assertEquals(10 + i, ibv_send_wr.wr.ud.remote_qpn(ud(w)));
                    assertEquals(INLINE, ibv_send_wr.send_flags(w));
                }
                post++;
            }
        }
    }

    @Test
    void removeLastShortensTheChainAndTheNextAddLinksAgain() {
        try (SendRequestList list = new SendRequestList(4)) {
            for (int i = 0; i < 3; i++) {
                list.add(i, REGION, REGION_BYTES, 1, 0, 8, false, false);
            }
            list.removeLast();
            assertEquals(2, list.count());
            assertEquals(2, chain(list).size());
            list.add(9, REGION, REGION_BYTES, 1, 0, 8, false, false);
            list.add(10, REGION, REGION_BYTES, 1, 0, 8, false, false);
            List<MemorySegment> c = chain(list);
            assertEquals(4, c.size());
            assertEquals(9, ibv_send_wr.wr_id(c.get(2)));
            assertEquals(10, ibv_send_wr.wr_id(c.get(3)));
            list.clear();
            list.add(1, REGION, REGION_BYTES, 1, 0, 8, false, false);
            list.removeLast();
            assertEquals(0, list.count());
            list.add(2, REGION, REGION_BYTES, 1, 0, 8, false, false);
            assertEquals(1, chain(list).size());
        }
    }

    @Test
    void signalAndWrIdRewriteOnlyTheirRequest() {
        try (SendRequestList list = new SendRequestList(3)) {
            list.add(0, REGION, REGION_BYTES, 1, 0, 8, false, true);
            list.add(0, REGION, REGION_BYTES, 1, 0, 8, false, false);
            list.signal(1, true);
            list.wrId(0, 42);
            list.wrId(1, 43);
            List<MemorySegment> c = chain(list);
            assertEquals(INLINE, ibv_send_wr.send_flags(c.get(0)));
            assertEquals(SIGNALED, ibv_send_wr.send_flags(c.get(1)));
            assertEquals(42, ibv_send_wr.wr_id(c.get(0)));
            assertEquals(43, ibv_send_wr.wr_id(c.get(1)));
            list.signal(1, false);
            list.signal(0, true);
            assertEquals(INLINE | SIGNALED, ibv_send_wr.send_flags(c.get(0)));
            assertEquals(0, ibv_send_wr.send_flags(c.get(1)));
            assertFalse(list.signaled(1));
            assertTrue(list.signaled(0));
            assertThrows(IndexOutOfBoundsException.class, () -> list.signal(2, true), "request 2 of a list of 2");
        }
    }

    @Test
    void failedIndexNamesTheRequestBadWrPointsAt() {
        try (SendRequestList list = new SendRequestList(4)) {
            for (int i = 0; i < 3; i++) {
                list.add(i, REGION, REGION_BYTES, 1, 0, 8, false, false);
            }
            list.resetBadWr();
            assertEquals(-1, list.failedIndex(), "bad_wr NULL after the reset");
            list.badWr().set(ValueLayout.JAVA_LONG, 0, chain(list).get(2).address());
            assertEquals(2, list.failedIndex());
            list.badWr().set(ValueLayout.JAVA_LONG, 0, chain(list).get(2).address() + 8);
            assertEquals(-1, list.failedIndex(), "not the start of a request");
        }
    }

    @Test
    void badInputIsRefusedWithAClearError() {
        SendRequestList list = new SendRequestList(1);
        IndexOutOfBoundsException range = assertThrows(IndexOutOfBoundsException.class,
                () -> list.add(0, REGION, 64, 1, 32, 40, false, false));
        assertTrue(range.getMessage().contains("outside memory region of 64 bytes"), range.getMessage());
        list.add(0, REGION, 64, 1, 0, 8, false, false);
        IllegalStateException full = assertThrows(IllegalStateException.class, () -> list.add(0, REGION, 64, 1, 0, 8, false, false));
        assertTrue(full.getMessage().contains("full (1)"), full.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new SendRequestList(0));
        list.close();
        list.close();
        IllegalStateException closed = assertThrows(IllegalStateException.class, () -> list.wrId(0, 1));
        assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
        assertThrows(IllegalStateException.class, () -> list.add(0, REGION, 64, 1, 0, 8, false, false));
    }
}
