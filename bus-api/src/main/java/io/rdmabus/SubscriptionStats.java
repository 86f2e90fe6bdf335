package io.rdmabus;

/**
 * Counters of one subscription, a snapshot.
 *
 * @param topic               topic name
 * @param framesReceived      well-formed frames taken in sequence (in order, or after a gap); not the duplicate or suspect ones
 * @param messagesDelivered   values handed to the subscriber
 * @param malformedFrames     frames dropped because a header field failed its bounds check, the payload did not decode,
 *                            or the sequence jumped ahead and the session's next frame did not confirm it (docs/wire-format.md)
 * @param gapMessages         frames missing per sequence numbers (lost on the wire or by the sender's transport), each
 *                            counted once; a frame dropped as a suspect jump that the next frame confirmed is one of them
 * @param droppedBySubscriber messages dropped locally by the slow-consumer policy or a full best-effort ring
 * @param duplicates          frames dropped as duplicates or late (sequence behind the expected one)
 * @param ringCapacity        slots of the subscription's receive rings: the transport's, plus, once a publication of the
 *                            same bus has sent to it over a transport that does not loop back, as many again for those
 * @param ringFree            free slots of those rings now; a reliable publisher is held back when its ring has none
 */
public record SubscriptionStats(String topic, long framesReceived, long messagesDelivered, long malformedFrames, long gapMessages,
                                long droppedBySubscriber, long duplicates, int ringCapacity, long ringFree) {
}
