package io.rdmabus.rdma.transport;

/** What a UD publication has sent, for the transport's counters ({@code udDatagramsSent} and the next two). */
interface UdSendCounts {
    /** @return datagrams posted */
    long sent();

    /** @return {@code ibv_post_send} calls made */
    long posts();

    /** @return datagrams that could not be posted (lost) */
    long postFailures();

    /** The sums of closed publications' counts ({@link UdEndpoint} keeps them, under its publications' lock). */
    final class Closed implements UdSendCounts {
        private long sent;
        private long posts;
        private long postFailures;

        void add(final UdSendCounts closed) {
            sent += closed.sent();
            posts += closed.posts();
            postFailures += closed.postFailures();
        }

        @Override
        public long sent() {
            return sent;
        }

        @Override
        public long posts() {
            return posts;
        }

        @Override
        public long postFailures() {
            return postFailures;
        }
    }
}
