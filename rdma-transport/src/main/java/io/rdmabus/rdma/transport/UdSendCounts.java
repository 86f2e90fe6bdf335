package io.rdmabus.rdma.transport;

/**
 * What UD publications have sent, for the transport's counters ({@code udDatagramsSent}, {@code udSendPosts},
 * {@code udDatagramsNotPosted}): a publication's own (written by its publishing thread, read by any: a read may miss
 * the latest post), or the sums of the closed ones ({@link UdEndpoint} keeps them, under its publications' lock).
 */
final class UdSendCounts {
    long sent;
    long posts;
    long postFailures;

    /** Adds a closed publication's counts to these sums. */
    void add(final UdSendCounts closed) {
        sent += closed.sent;
        posts += closed.posts;
        postFailures += closed.postFailures;
    }

    /** @return datagrams posted */
    long sent() {
        return sent;
    }

    /** @return {@code ibv_post_send} calls made */
    long posts() {
        return posts;
    }

    /** @return datagrams that could not be posted (lost) */
    long postFailures() {
        return postFailures;
    }
}
