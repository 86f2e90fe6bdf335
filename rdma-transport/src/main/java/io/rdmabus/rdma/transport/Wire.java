package io.rdmabus.rdma.transport;

/**
 * The transport's RC messages: their type codes, lengths and field offsets. An 8-byte envelope (type, then one
 * argument: the topic id of DATA) is in front of every RC message and every UD datagram; the bus frame (its own 32-byte
 * header + payload) follows the envelope of a DATA message untouched. {@link ControlFlyweight} is the one class that
 * reads and writes RC messages through these offsets and documents each message's fields; {@link ControlMessages}
 * classifies a received one. (The UD path still reads and writes its datagrams' envelope with these constants.)
 */
final class Wire {
    static final int ENVELOPE_BYTES = 8;
    /** Control buffer slot size: the 16-byte control messages, and AUTH (envelope + 32-byte proof). */
    static final int CONTROL_BYTES = 64;
    /** Length of the fixed control messages (all but AUTH). */
    static final int CONTROL_MESSAGE_BYTES = 16;
    /** Length of an AUTH message: the envelope and an HMAC-SHA256 proof. */
    static final int AUTH_BYTES = ENVELOPE_BYTES + 32;
    static final int TYPE_OFFSET = 0;
    static final int ARG_OFFSET = 4;
    static final int ARG2_OFFSET = 8;
    /** UD_INFO: the Q_Key; RESUME_FAILED: the publisher's retention frames. */
    static final int ARG3_OFFSET = 12;
    /** RESUME, RESUME_FAILED: the next sequence the subscriber needs; START: the first sequence of the stream. */
    static final int NEXT_SEQUENCE_OFFSET = 16;
    /** RESUME_FAILED: the oldest sequence the publisher retains (-1: session gone). */
    static final int OLDEST_SEQUENCE_OFFSET = 24;
    /** Length of a RESUME message. */
    static final int RESUME_BYTES = 24;
    /** Length of a START message. */
    static final int START_BYTES = 24;
    /** Length of a RESUME_FAILED message. */
    static final int RESUME_FAILED_BYTES = 32;
    /** NAK: the first missing sequence (the count of missing frames is at {@link #ARG3_OFFSET}). */
    static final int NAK_FIRST_OFFSET = 16;
    /** Length of a NAK message. */
    static final int NAK_BYTES = 24;
    /** The most frames one NAK asks for: the bus's best-effort gap bound, and the largest {@code rdma.ud.recovery.frames}. */
    static final int NAK_MAX_FRAMES = 1024;

    /** A bus frame for the topic in {@code arg}; consumes one data credit. */
    static final int DATA = 1;
    /** First message on a connection: the data credits the sender grants and its largest frame. */
    static final int INIT = 2;
    /** More data credits: receive buffers the bus consumed and that were re-posted. */
    static final int CREDIT = 3;
    /** The sender has a subscription to topic {@code arg}: send me its frames. */
    static final int SUB = 4;
    /** The sender no longer subscribes topic {@code arg}. */
    static final int UNSUB = 5;
    /** The sender is closing the connection. */
    static final int BYE = 6;
    /**
     * The connector's proof of the bus secret (HMAC-SHA256, 32 bytes after the envelope; see {@link PeerAuth}): its first
     * message when a secret is set. The acceptor sends and accepts nothing else (no INIT, no SUB) before it verified it.
     */
    static final int AUTH = 7;
    /**
     * Subscriber to publisher on a new connection to a node it was connected to before: resume session {@code arg2}
     * of topic {@code arg} from the given sequence (replayed from the publisher's retention ring before new frames).
     */
    static final int RESUME = 8;
    /** Publisher to subscriber: the requested sequence is no longer retained (or the session is gone). */
    static final int RESUME_FAILED = 9;
    /**
     * Publisher to subscriber, on a connection just routed a RELIABLE topic (or for a publication of a routed topic just
     * added), before any DATA of that publication on it: this connection's stream of session {@code arg2} of topic
     * {@code arg} starts at the given sequence (no frame of the session on this connection will be older). The
     * subscriber keeps it as where that stream resumes until a frame moves it on, so a break before the first frame
     * still resumes from the stream's start.
     */
    static final int START = 10;
    /**
     * Subscriber to publisher: the UD stream (session {@code arg2} of topic {@code arg}) lost {@code arg3} frames from
     * the sequence at {@link #NAK_FIRST_OFFSET} on: re-send the ones still retained (as {@link #RECOVERED}).
     */
    static final int NAK = 11;
    /**
     * Publisher to subscriber: a retained BEST_EFFORT frame re-sent for a NAK (envelope with the topic id, then the bus
     * frame, as DATA); consumes one data credit. Kept apart from DATA: it fills a UD stream's gap, not an RC stream.
     */
    static final int RECOVERED = 12;
    /**
     * Subscriber to publisher: {@code arg2} frames of topic {@code arg} that the publisher sent on this connection were
     * consumed (or dropped) here, so it may have that many more of the topic outstanding. Each (connection, topic) has a
     * window of frames, the data credits the subscriber granted in its INIT; a publication takes one of it per DATA of its
     * topic besides the connection credit. It bounds the frames a subscriber keeps for a back-pressuring sink of one
     * topic, which frees the receive buffers (and the connection credits) of the other topics.
     */
    static final int TOPIC_CREDIT = 13;
    /** The sender's best-effort UD address (QP number, IPv4 address, Q_Key): send my BEST_EFFORT frames there. */
    static final int UD_INFO = 0x20;
    /**
     * A UD datagram on the discovery control group (never on RC): a node's listen endpoint and published topics
     * ({@link Advert} has the layout).
     */
    static final int ADVERT = 0x21;

    private Wire() {
    }
}
