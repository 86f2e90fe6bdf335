package io.rdmabus.rdma.transport;

/**
 * The transport's 8-byte envelope in front of every RC message (little-endian), and its control messages.
 * The bus frame (its own 32-byte header + payload) follows the envelope of a DATA message untouched.
 *
 * <pre>
 *  0  u8   type     DATA, INIT, CREDIT, SUB, UNSUB, BYE
 *  1  u8   reserved 0
 *  2  u16  reserved 0
 *  4  i32  arg      DATA/SUB/UNSUB: topic id of the publication/subscription; CREDIT: credits granted;
 *                   INIT: initial credits
 *  8  i32  arg2     INIT only: the sender's largest frame in bytes (control messages are 16 bytes long, AUTH 40)
 * 12  i32  reserved
 * </pre>
 *
 * <p>RESUME (24 bytes, subscriber to publisher, before its SUB of the topic on a new connection): arg = topic id,
 * arg2 = the publisher's session id, offset 12 reserved 0, offset 16 i64 = the next sequence the subscriber needs (&gt;= 0).
 * RESUME_FAILED (32 bytes, publisher to subscriber): arg = topic id, arg2 = session id, offset 12 = the publisher's
 * {@code rdma.retention.frames} (&gt;= 1), offset 16 i64 = the requested next sequence (&gt;= 0), offset 24 i64 = the oldest
 * sequence it retains (-1: the session is gone).
 *
 * <p>UD_INFO (the UD path): arg = the sender's UD QP number, arg2 = its IPv4 address (RoCEv2 GID {@code ::ffff:ip}),
 * offset 12 = the Q_Key its QP accepts. A UD datagram carries the same 8-byte envelope (DATA, topic id) in front of the
 * bus frame.
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
    /** RESUME, RESUME_FAILED: the next sequence the subscriber needs. */
    static final int NEXT_SEQUENCE_OFFSET = 16;
    /** RESUME_FAILED: the oldest sequence the publisher retains (-1: session gone). */
    static final int OLDEST_SEQUENCE_OFFSET = 24;
    /** Length of a RESUME message. */
    static final int RESUME_BYTES = 24;
    /** Length of a RESUME_FAILED message. */
    static final int RESUME_FAILED_BYTES = 32;

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
