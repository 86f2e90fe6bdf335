package io.rdmabus;

/** Where a message handed to a {@link MessageHandler} came from (as {@link Received}, without the value). */
public interface MessageHeader {
    /** @return the publisher's session id */
    int sessionId();

    /** @return the sequence of the message's first frame within the publisher session */
    long sequence();

    /** @return the publisher's wall clock (epoch ns) at publish time; 0 for a topic {@link Topic#withoutTimestamps() without timestamps} */
    long timestampNs();

    /** @return messages of this session lost right before this one (best effort; 0 on a healthy reliable stream) */
    long lostBefore();
}
