package io.rdmabus.rdma.transport;

/**
 * The layout of a work request id ({@code wr_id}), the 64 bits the device hands back with each completion; the only
 * place that knows it. Stateless.
 *
 * <pre>
 *  63            32 31  28 27        16 15          0
 * +----------------+------+------------+-------------+
 * | connection id  | kind |    pool    |    slot     |   receives, control sends, UD receives, adverts
 * | connection id  | kind |   post sequence (28 bits)  |   RC data sends (see {@link Connection})
 * |       0        | kind |   post sequence (28 bits)  |   UD data sends (see {@link UdSendRing})
 * +----------------+------+------------+-------------+
 * </pre>
 *
 * Connection id 0 is the UD endpoint's (it has no connection); pool is a publication's index in the
 * {@link PublicationTable}, slot a buffer index within what the kind names.
 */
final class WorkRequestId {
    /** An RC receive buffer (slot = its index). */
    static final int KIND_RECV = 1;
    /** An RC control send (slot = its control slot). */
    static final int KIND_CTRL_SEND = 2;
    /** An RC data send (low 28 bits = its post sequence on the connection). */
    static final int KIND_DATA_SEND = 3;
    /** A UD data send (low 28 bits = its post sequence on the UD QP, see {@link UdSendRing}). */
    static final int KIND_UD_SEND = 4;
    /** A UD receive buffer (slot = its index). */
    static final int KIND_UD_RECV = 5;
    /** A discovery ADVERT datagram's send (slot = its page). */
    static final int KIND_UD_ADVERT_SEND = 6;
    /** The bits of a data send's post sequence. */
    static final long SEQUENCE_MASK = 0x0FFF_FFFFL;

    private WorkRequestId() {
    }

    /** @return the wr_id of a {@code kind} work request on {@code pool}/{@code slot} of connection {@code connectionId} */
    static long of(final int connectionId, final int kind, final int pool, final int slot) {
        return ((long) connectionId << 32) | ((long) kind << 28) | ((long) (pool & 0xFFF) << 16) | (slot & 0xFFFF);
    }

    /** @return the wr_id of data send {@code seq} on a connection: the low 28 bits of its post sequence */
    static long ofDataSend(final int connectionId, final long seq) {
        return ((long) connectionId << 32) | ((long) KIND_DATA_SEND << 28) | (seq & SEQUENCE_MASK);
    }

    /** @return the wr_id of UD data send {@code seq}: the low 28 bits of its post sequence on the UD QP */
    static long ofUdSend(final long seq) {
        return ((long) KIND_UD_SEND << 28) | (seq & SEQUENCE_MASK);
    }

    static int connectionId(final long wrId) {
        return (int) (wrId >>> 32);
    }

    static int kind(final long wrId) {
        return (int) (wrId >>> 28) & 0xF;
    }

    static int pool(final long wrId) {
        return (int) (wrId >>> 16) & 0xFFF;
    }

    static int slot(final long wrId) {
        return (int) wrId & 0xFFFF;
    }

    /** @return the post-sequence bits of a data send's wr_id (RC or UD) */
    static long sequenceBits(final long wrId) {
        return wrId & SEQUENCE_MASK;
    }

    /** @return whether {@code kind} belongs to the UD endpoint */
    static boolean isUd(final int kind) {
        return kind == KIND_UD_SEND || kind == KIND_UD_RECV || kind == KIND_UD_ADVERT_SEND;
    }
}
