package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_send_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_sge;

/**
 * Byte offsets of the {@code struct ibv_send_wr} and {@code struct ibv_sge} fields that {@link SendRequest} and
 * {@link SendRequestList} write with plain stores, taken from the generated layouts (which {@code VerbsLayoutTest}
 * checks against the C headers).
 */
final class SendWrLayout {
    static final int SIGNALED = RdmaCm.IBV_SEND_SIGNALED();
    static final int INLINE = RdmaCm.IBV_SEND_INLINE();
    static final int WR_BYTES = (int) ibv_send_wr.sizeof();
    static final int SGE_BYTES = (int) ibv_sge.sizeof();
    static final int WR_ID = (int) ibv_send_wr.wr_id$offset();
    static final int NEXT = (int) ibv_send_wr.next$offset();
    static final int OPCODE = (int) ibv_send_wr.opcode$offset();
    static final int FLAGS = (int) ibv_send_wr.send_flags$offset();
    static final int RDMA = (int) (ibv_send_wr.wr$offset() + ibv_send_wr.wr.rdma$offset());
    static final int RDMA_REMOTE_ADDR = RDMA + (int) ibv_send_wr.wr.rdma.remote_addr$offset();
    static final int RDMA_RKEY = RDMA + (int) ibv_send_wr.wr.rdma.rkey$offset();
    static final int UD = (int) (ibv_send_wr.wr$offset() + ibv_send_wr.wr.ud$offset());
    static final int UD_AH = UD + (int) ibv_send_wr.wr.ud.ah$offset();
    static final int UD_QPN = UD + (int) ibv_send_wr.wr.ud.remote_qpn$offset();
    static final int UD_QKEY = UD + (int) ibv_send_wr.wr.ud.remote_qkey$offset();
    static final int SGE_ADDR = (int) ibv_sge.addr$offset();
    static final int SGE_LENGTH = (int) ibv_sge.length$offset();
    static final int SGE_LKEY = (int) ibv_sge.lkey$offset();

    private SendWrLayout() {
    }
}
