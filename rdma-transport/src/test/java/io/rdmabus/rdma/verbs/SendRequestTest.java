package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_send_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_sge;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The single send request's plain stores land where the provider reads them: read back through the generated
 * accessors. Host only: no device, no post.
 */
class SendRequestTest {
    private static final long REGION = 0x7f00_0000_0000L;
    private static final long REGION_BYTES = 1 << 20;

    private static MemorySegment sge(MemorySegment wr) {
        return ibv_send_wr.sg_list(wr).reinterpret(ibv_sge.sizeof());
    }

    @Test
    void aPreparedSendHoldsItsFieldsAndEndsTheChain() {
        try (SendRequest request = new SendRequest()) {
            request.prepare(RdmaCm.IBV_WR_SEND(), 42L, REGION, REGION_BYTES, 0x1234, 4096, 104, true).inline();
            MemorySegment wr = request.wr();
            assertEquals(42L, ibv_send_wr.wr_id(wr));
            assertEquals(0L, ibv_send_wr.next(wr).address());
            assertEquals(RdmaCm.IBV_WR_SEND(), ibv_send_wr.opcode(wr));
            assertEquals(RdmaCm.IBV_SEND_SIGNALED() | RdmaCm.IBV_SEND_INLINE(), ibv_send_wr.send_flags(wr));
            assertEquals(1, ibv_send_wr.num_sge(wr));
            assertEquals(REGION + 4096, ibv_sge.addr(sge(wr)));
            assertEquals(104, ibv_sge.length(sge(wr)));
            assertEquals(0x1234, ibv_sge.lkey(sge(wr)));
            assertEquals(104, request.length());

            request.prepare(RdmaCm.IBV_WR_SEND(), 43L, REGION, REGION_BYTES, 0x1234, 0, 64, false);
            assertEquals(0, ibv_send_wr.send_flags(wr), "a new prepare clears the flags of the one before");
            assertEquals(REGION, ibv_sge.addr(sge(wr)));
        }
    }

    @Test
    void anRdmaWriteCarriesItsRemoteAddressAndKey() {
        try (SendRequest request = new SendRequest()) {
            request.prepare(RdmaCm.IBV_WR_RDMA_WRITE(), 7L, REGION, REGION_BYTES, 1, 0, 256, false).remote(0x5500_0000_1000L, 0xabcd);
            MemorySegment rdma = ibv_send_wr.wr.rdma(ibv_send_wr.wr(request.wr()));
            assertEquals(RdmaCm.IBV_WR_RDMA_WRITE(), ibv_send_wr.opcode(request.wr()));
            assertEquals(0x5500_0000_1000L, ibv_send_wr.wr.rdma.remote_addr(rdma));
            assertEquals(0xabcd, ibv_send_wr.wr.rdma.rkey(rdma));
        }
    }

    @Test
    void aRangeOutsideTheRegionOrAClosedRequestIsRefused() {
        SendRequest request = new SendRequest();
        assertThrows(IndexOutOfBoundsException.class,
            () -> request.prepare(RdmaCm.IBV_WR_SEND(), 1L, REGION, REGION_BYTES, 1, REGION_BYTES - 8, 16, false));
        request.close();
        assertThrows(IllegalStateException.class, () -> request.prepare(RdmaCm.IBV_WR_SEND(), 1L, REGION, REGION_BYTES, 1, 0, 16, false));
        assertThrows(IllegalStateException.class, request::inline);
    }
}
