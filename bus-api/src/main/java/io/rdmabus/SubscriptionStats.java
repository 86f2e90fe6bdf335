package io.rdmabus;

/**
 * Counters of one subscription, a snapshot.
 *
 * @param topic               topic name
 * @param framesReceived      well-formed frames accepted from the transport
 * @param messagesDelivered   values handed to the subscriber
 * @param malformedFrames     frames dropped because a header field failed its bounds check, or the payload did not decode
 * @param gapMessages         frames missing per sequence numbers (lost on the wire or by the sender's transport)
 * @param droppedBySubscriber messages dropped locally by the slow-consumer policy or a full best-effort ring
 * @param duplicates          frames dropped as duplicates or late (sequence behind the expected one)
 * @param ringCapacity        slots of the subscription's receive ring
 * @param ringFree            free slots now: the credits a reliable transport may grant its publishers
 */
public record SubscriptionStats(String topic, long framesReceived, long messagesDelivered, long malformedFrames, long gapMessages,
                                long droppedBySubscriber, long duplicates, int ringCapacity, long ringFree) {
}
