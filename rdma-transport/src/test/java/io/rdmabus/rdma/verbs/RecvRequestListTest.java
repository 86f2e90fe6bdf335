package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.ibv_recv_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_sge;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The receive post list's plain stores land where the provider reads them: read back through the generated accessors
 * by following {@code next} from the first request to the NULL that ends the chain. Host only: no device, no post.
 */
class RecvRequestListTest {
    private static final long REGION = 0x7f00_0000_0000L;
    private static final long REGION_BYTES = 1 << 20;

    private static List<MemorySegment> chain(RecvRequestList list) {
        List<MemorySegment> out = new ArrayList<>();
        long at = list.first().address();
        while (at != 0 && out.size() <= list.capacity()) {
            MemorySegment w = MemorySegment.ofAddress(at).reinterpret(ibv_recv_wr.sizeof());
            out.add(w);
            at = ibv_recv_wr.next(w).address();
        }
        return out;
    }

    private static MemorySegment sge(MemorySegment wr) {
        return ibv_recv_wr.sg_list(wr).reinterpret(ibv_sge.sizeof());
    }

    @Test
    void eachPostsRequestsAreChainedWithTheirFieldsAndTheChainEndsAtTheLastOne() {
        try (RecvRequestList list = new RecvRequestList(8)) {
            for (int round = 0; round < 3; round++) {
                list.clear();
                int n = round == 1 ? 8 : 3 + round; // a full list between shorter ones: the end moves both ways
                for (int i = 0; i < n; i++) {
                    list.add(1000L * round + i, REGION, REGION_BYTES, 40 + round, 128L * i, 100 + i);
                }
                assertEquals(n, list.count());
                assertEquals(n == 8, list.isFull());
                List<MemorySegment> c = chain(list);
                assertEquals(n, c.size(), "the chain ends at the last request added, round " + round);
                for (int i = 0; i < n; i++) {
                    MemorySegment w = c.get(i);
                    assertEquals(1000L * round + i, ibv_recv_wr.wr_id(w));
                    assertEquals(1000L * round + i, list.wrId(i));
                    assertEquals(1, ibv_recv_wr.num_sge(w));
                    assertEquals(REGION + 128L * i, ibv_sge.addr(sge(w)));
                    assertEquals(100 + i, ibv_sge.length(sge(w)));
                    assertEquals(40 + round, ibv_sge.lkey(sge(w)));
                }
            }
        }
    }

    @Test
    void dropFirstKeepsTheRestAsTheNewChain() {
        try (RecvRequestList list = new RecvRequestList(8)) {
            for (int i = 0; i < 5; i++) {
                list.add(i, REGION, REGION_BYTES, 7, 64L * i, 64);
            }
            list.dropFirst(2);
            List<MemorySegment> c = chain(list);
            assertEquals(3, c.size());
            for (int i = 0; i < 3; i++) {
                assertEquals(2 + i, ibv_recv_wr.wr_id(c.get(i)));
                assertEquals(REGION + 64L * (2 + i), ibv_sge.addr(sge(c.get(i))));
            }
            list.add(9, REGION, REGION_BYTES, 7, 0, 64);
            assertEquals(4, chain(list).size(), "an add after dropFirst extends the kept chain");
        }
    }

    @Test
    void outOfRangeFullAndClosedAreRefused() {
        RecvRequestList list = new RecvRequestList(2);
        assertThrows(IndexOutOfBoundsException.class, () -> list.add(0, REGION, REGION_BYTES, 1, REGION_BYTES - 10, 64));
        list.add(0, REGION, REGION_BYTES, 1, 0, 64);
        list.add(1, REGION, REGION_BYTES, 1, 64, 64);
        IllegalStateException full = assertThrows(IllegalStateException.class, () -> list.add(2, REGION, REGION_BYTES, 1, 128, 64));
        assertTrue(full.getMessage().contains("full"), full.getMessage());
        list.clear();
        list.close();
        IllegalStateException closed = assertThrows(IllegalStateException.class, () -> list.add(0, REGION, REGION_BYTES, 1, 0, 64));
        assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
    }
}
