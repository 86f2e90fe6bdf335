package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.ibv_wc;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The plain loads read each entry's fields where the provider writes them (written here through the generated layout). */
class WorkCompletionsTest {
    @Test
    void readsEachEntrysFieldsAtTheLayoutsOffsets() {
        WorkCompletions wcs = new WorkCompletions(4);
        for (int i = 0; i < 4; i++) {
            MemorySegment e = ibv_wc.asSlice(wcs.segment(), i);
            ibv_wc.wr_id(e, 0x1_0000_0000L * (i + 1) + i);
            ibv_wc.status(e, i == 2 ? WorkCompletions.WR_FLUSH_ERR : WorkCompletions.SUCCESS);
            ibv_wc.opcode(e, WorkCompletions.OPCODE_RECV + i);
            ibv_wc.byte_len(e, 40 + 64 * i);
            ibv_wc.src_qp(e, 0x00FF_FF00 + i);
        }
        for (int i = 0; i < 4; i++) {
            assertEquals(0x1_0000_0000L * (i + 1) + i, wcs.wrId(i));
            assertEquals(i == 2 ? WorkCompletions.WR_FLUSH_ERR : WorkCompletions.SUCCESS, wcs.status(i));
            assertEquals(WorkCompletions.OPCODE_RECV + i, wcs.opcode(i));
            assertEquals(40 + 64 * i, wcs.byteLength(i));
            assertEquals(0x00FF_FF00 + i, wcs.sourceQp(i));
        }
        assertThrows(IndexOutOfBoundsException.class, () -> wcs.wrId(4));
        wcs.close();
        assertThrows(IllegalStateException.class, () -> wcs.status(0));
    }
}
