package io.rdmabus.rdma.verbs;

/** Fills a {@link SendRequestList} without a device (host tests of other packages): requests into a made-up region. */
public final class SendRequestListFixture {
    private static final long REGION = 0x7f00_0000_0000L;
    private static final long REGION_BYTES = 1 << 20;

    private SendRequestListFixture() {
    }

    /** Appends {@code n} unsignalled inline 64-byte UD sends (wr_id 0, as the UD publication adds them). */
    public static void addInlineUd(final SendRequestList list, final int n) {
        for (int i = 0; i < n; i++) {
            list.add(0, REGION, REGION_BYTES, 1, 64L * list.count(), 64, false, true);
            list.toUd(0x1000 + list.count(), 0x100 + list.count(), 0x1234);
        }
    }
}
