package io.rdmabus;

/**
 * A received value with where it came from.
 *
 * @param value       the decoded value
 * @param sessionId   the publisher's session id (new each time a publication is created)
 * @param sequence    sequence of the message's first frame within the publisher session
 * @param timestampNs the publisher's wall clock (epoch ns) at publish time; 0 for a topic {@link Topic#withoutTimestamps()
 *                    without timestamps}
 * @param lostBefore  messages of this publisher session lost right before this one (best effort: sequence gaps and
 *                    local drops; always 0 on a healthy reliable stream)
 * @param <T>         value type
 */
public record Received<T>(T value, int sessionId, long sequence, long timestampNs, long lostBefore) {
}
