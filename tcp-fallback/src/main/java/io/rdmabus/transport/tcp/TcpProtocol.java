package io.rdmabus.transport.tcp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rdmabus.spi.BusSecret;

import org.agrona.MutableDirectBuffer;

/**
 * The TCP transport's wire protocol, version 3 (see {@code tcp-fallback/README.md}). One connection per pair of
 * nodes carries, in both directions, a stream of little-endian, length-prefixed messages:
 *
 * <pre>
 *  0  u32  length      bytes after this field (type + body); 1 .. max frame + 5
 *  4  u8   type        1 HELLO, 2 SUBSCRIBE, 3 UNSUBSCRIBE, 4 DATA, 5 AUTH, 6 CREDIT
 *  5  ...  body
 *
 *  HELLO       i32 magic 0x52425450 ("RBTP"), u16 version, i64 node id, i32 max frame bytes, u8 flags (bit 0: has a bus
 *              secret), 16 bytes nonce, u16 n + n bytes UTF-8 bus name
 *  SUBSCRIBE   i32 topic id, u8 delivery (0 best effort, 1 reliable), i32 window (reliable: the bytes of DATA messages of
 *              this topic the sender may have outstanding to this node, i.e. sent and not yet given back by CREDIT;
 *              best effort: 0), u16 n + n bytes UTF-8 topic name
 *  UNSUBSCRIBE i32 topic id
 *  DATA        i32 topic id, then one bus frame (its 32-byte header and payload), opaque to the transport
 *  AUTH        32 bytes proof = HMAC-SHA256(secret, "rdma-bus tcp auth v1" | role u8 ('A' the accepting side proves,
 *              'C' the dialling side proves) | prover id i64 | verifier id i64 | verifier's nonce | prover's nonce)
 *  CREDIT      i32 topic id, i32 bytes (> 0): DATA bytes of that reliable topic this node has delivered to its
 *              subscriptions since its last CREDIT; the receiver may send that many more
 * </pre>
 *
 * <p>Flow control is per topic, so one back-pressured reliable topic never holds up another on the same connection:
 * the subscribing node grants each reliable topic a window (SUBSCRIBE) and gives bytes back (CREDIT) as its
 * subscriptions take frames; a frame a subscription cannot take yet waits in that topic's queue on the subscribing
 * node, which a window bounds, while the connection goes on reading other topics. DATA bytes count whole messages,
 * length prefix included.
 *
 * <p>Each side sends HELLO first; nothing else is accepted before the peer's HELLO. With a bus secret each side then
 * sends AUTH, and nothing else is accepted before the peer's AUTH matched: each side proves knowledge of the secret
 * over the other side's fresh nonce (no replay), and the role and both ids are inside the MAC, so a proof cannot be
 * reflected back to its sender or reused on another pair (the rdma transport's scheme, {@code docs/rdma-transport.md}).
 */
final class TcpProtocol {
    static final int VERSION = 3;
    static final int MAGIC = 0x52425450;

    static final int TYPE_HELLO = 1;
    static final int TYPE_SUBSCRIBE = 2;
    static final int TYPE_UNSUBSCRIBE = 3;
    static final int TYPE_DATA = 4;
    static final int TYPE_AUTH = 5;
    static final int TYPE_CREDIT = 6;

    static final int FLAG_SECRET = 1;
    static final int NONCE_BYTES = 16;
    static final int PROOF_BYTES = 32;
    /** HELLO body up to the name: magic, version, node id, max frame, flags, nonce. */
    static final int HELLO_FIXED = 4 + 2 + 8 + 4 + 1 + NONCE_BYTES;
    static final byte ROLE_ACCEPTOR = 'A';
    static final byte ROLE_CONNECTOR = 'C';
    private static final byte[] AUTH_LABEL = "rdma-bus tcp auth v1".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Length prefix. */
    static final int LENGTH_FIELD = 4;
    /** Length prefix + type + topic id in front of each DATA frame. */
    static final int DATA_HEADER = LENGTH_FIELD + 1 + 4;
    /** The largest control message (a SUBSCRIBE with a 128-character name in UTF-8, or a HELLO with a long bus name). */
    static final int MAX_CONTROL_LENGTH = 2048;
    private static final int MAX_NAME_BYTES = 1024;

    /**
     * Writes a DATA message's header (length prefix, type, topic id); its frame follows at {@code index + DATA_HEADER}.
     *
     * @param frameLength the frame's length (bus header included)
     */
    static void putDataHeader(final MutableDirectBuffer buffer, final int index, final int topicId, final int frameLength) {
        buffer.putInt(index, 1 + 4 + frameLength, ByteOrder.LITTLE_ENDIAN);
        buffer.putByte(index + LENGTH_FIELD, (byte) TYPE_DATA);
        buffer.putInt(index + LENGTH_FIELD + 1, topicId, ByteOrder.LITTLE_ENDIAN);
    }

    private TcpProtocol() {
    }

    /**
     * @param maxFrameBytes the largest frame
     * @return the largest value a length prefix may carry
     */
    static int maxMessageLength(final int maxFrameBytes) {
        return Math.max(MAX_CONTROL_LENGTH, 1 + 4 + maxFrameBytes);
    }

    static ByteBuf hello(final ByteBufAllocator alloc, final long nodeId, final int maxFrameBytes, final int flags, final byte[] nonce,
                         final String busName) {
        final byte[] name = truncatedUtf8(busName);
        final int length = 1 + HELLO_FIXED + 2 + name.length;
        final ByteBuf buf = alloc.buffer(LENGTH_FIELD + length);
        buf.writeIntLE(length).writeByte(TYPE_HELLO).writeIntLE(MAGIC).writeShortLE(VERSION).writeLongLE(nodeId).writeIntLE(maxFrameBytes)
            .writeByte(flags).writeBytes(nonce).writeShortLE(name.length).writeBytes(name);
        return buf;
    }

    static ByteBuf auth(final ByteBufAllocator alloc, final byte[] proof) {
        final ByteBuf buf = alloc.buffer(LENGTH_FIELD + 1 + PROOF_BYTES);
        buf.writeIntLE(1 + PROOF_BYTES).writeByte(TYPE_AUTH).writeBytes(proof);
        return buf;
    }

    /** @return a fresh random nonce for a HELLO (control path) */
    static byte[] nonce() {
        final byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        return nonce;
    }

    /**
     * @param secret        the bus secret
     * @param role          who proves: {@link #ROLE_ACCEPTOR} or {@link #ROLE_CONNECTOR}
     * @param proverId      the proving node's id
     * @param verifierId    the verifying node's id
     * @param verifierNonce the nonce of the verifier's HELLO
     * @param proverNonce   the nonce of the prover's HELLO
     * @return the AUTH proof
     */
    static byte[] proof(final BusSecret secret, final byte role, final long proverId, final long verifierId, final byte[] verifierNonce,
                        final byte[] proverNonce) {
        final byte[] ids = new byte[16];
        final ByteBuffer b = ByteBuffer.wrap(ids).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(proverId).putLong(verifierId);
        return secret.hmac(AUTH_LABEL, new byte[] {role}, ids, verifierNonce, proverNonce);
    }

    /** SUBSCRIBE body up to the name: topic id, delivery, window. */
    static final int SUBSCRIBE_FIXED = 4 + 1 + 4;

    /**
     * @param windowBytes reliable: the topic's window ({@link TcpTransportConfig#TOPIC_WINDOW_BYTES}); best effort: 0
     */
    static ByteBuf subscribe(final ByteBufAllocator alloc, final int topicId, final boolean reliable, final int windowBytes,
                             final String topicName) {
        final byte[] name = truncatedUtf8(topicName);
        final int length = 1 + SUBSCRIBE_FIXED + 2 + name.length;
        final ByteBuf buf = alloc.buffer(LENGTH_FIELD + length);
        buf.writeIntLE(length).writeByte(TYPE_SUBSCRIBE).writeIntLE(topicId).writeByte(reliable ? 1 : 0).writeIntLE(reliable ? windowBytes : 0)
            .writeShortLE(name.length).writeBytes(name);
        return buf;
    }

    static ByteBuf credit(final ByteBufAllocator alloc, final int topicId, final int bytes) {
        final ByteBuf buf = alloc.buffer(LENGTH_FIELD + 9);
        buf.writeIntLE(9).writeByte(TYPE_CREDIT).writeIntLE(topicId).writeIntLE(bytes);
        return buf;
    }

    static ByteBuf unsubscribe(final ByteBufAllocator alloc, final int topicId) {
        final ByteBuf buf = alloc.buffer(LENGTH_FIELD + 5);
        buf.writeIntLE(5).writeByte(TYPE_UNSUBSCRIBE).writeIntLE(topicId);
        return buf;
    }

    private static byte[] truncatedUtf8(final String text) {
        final byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= MAX_NAME_BYTES) {
            return bytes;
        }
        return java.util.Arrays.copyOf(bytes, MAX_NAME_BYTES);
    }

    /**
     * @param buf    source
     * @param offset where the u16 length starts
     * @param end    end of the message
     * @return the string, or {@code null} if it overruns the message
     */
    static String readName(final ByteBuf buf, final int offset, final int end) {
        if (offset + 2 > end) {
            return null;
        }
        final int n = buf.getUnsignedShortLE(offset);
        if (offset + 2 + n > end) {
            return null;
        }
        return buf.toString(offset + 2, n, StandardCharsets.UTF_8);
    }
}
