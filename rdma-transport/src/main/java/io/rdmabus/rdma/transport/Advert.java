package io.rdmabus.rdma.transport;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The discovery ADVERT datagram (UD, on the bus's control multicast group; see {@code docs/rdma-transport.md},
 * "Discovery"). Little-endian, starting with the UD envelope so the receive path tells it from a DATA frame:
 *
 * <pre>
 *  0  u8   type       0x21 ADVERT (bytes 1..3 zero: the envelope's reserved bytes)
 *  4  i32  magic      0x56444252 ("RBDV")
 *  8  u8   version    1
 *  9  u8   flags      bit 0: a MAC follows the topic ids (set exactly when the sender has a bus secret)
 * 10  u8   page       0-based page of this node's topic list
 * 11  u8   pages      pages of this node's topic list (1..MAX_PAGES)
 * 12  i64  node id    the sender's transport node id (not 0)
 * 20  i32  ipv4       its rdma_cm listen address (big-endian value, not 0, not multicast or 255.255.255.255)
 * 24  u16  port       its rdma_cm listen port (not 0)
 * 26  u16  n          topic ids on this page
 * 28  i32  topic ids  n of them, each not 0
 * 28+4n    MAC        16 bytes: HMAC-SHA256(bus secret, "rdma-bus advert v1\0" | rdma.domain | "\0" | bytes 0..28+4n), truncated
 * </pre>
 *
 * <p>A node publishing more topics than fit one datagram sends several pages per interval; beyond {@link #MAX_PAGES}
 * pages the rest is not advertised (counted, logged once). Replaying a captured advert only re-announces the genuine
 * node's endpoint, and the dial that follows is authenticated (PeerAuth), so the MAC carries no timestamp.
 *
 * <p>Pure logic (no verbs): {@link #encode} on the cm thread, {@link #decode} on the cm thread for a copy the poller took.
 */
final class Advert {
    static final int MAGIC = 0x56444252;
    static final int VERSION = 1;
    static final int FLAG_MAC = 1;
    static final int HEADER_BYTES = 28;
    static final int MAC_BYTES = 16;
    /** Pages one node sends per interval at most (each one datagram). */
    static final int MAX_PAGES = 16;
    /** The largest datagram any node accepts ({@code rdma.ud.payload.bytes} is at most 4096). */
    static final int MAX_BYTES = 4096;
    static final int MAGIC_OFFSET = 4;
    static final int VERSION_OFFSET = 8;
    static final int FLAGS_OFFSET = 9;
    static final int PAGE_OFFSET = 10;
    static final int PAGES_OFFSET = 11;
    static final int NODE_OFFSET = 12;
    static final int IPV4_OFFSET = 20;
    static final int PORT_OFFSET = 24;
    static final int COUNT_OFFSET = 26;

    /** Decode outcome: a well-formed advert whose MAC (if this node has a secret) matched. */
    static final int OK = 0;
    /** Decode outcome: bad length, magic, version, flags, page, node id, address, port or topic id. */
    static final int MALFORMED = 1;
    /** Decode outcome: well-formed, but the MAC is missing, wrong, or present while this node has no secret. */
    static final int REJECTED = 2;

    private static final byte[] LABEL = "rdma-bus advert v1\0".getBytes(StandardCharsets.UTF_8);

    /**
     * A decoded advert.
     *
     * @param nodeId the advertiser's node id
     * @param ipv4   its listen address (big-endian int)
     * @param port   its listen port
     * @param page   this page of its topic list
     * @param pages  pages of its topic list
     * @param topics the topic ids on this page
     */
    record Decoded(long nodeId, int ipv4, int port, int page, int pages, int[] topics) {
        /** @return the listen endpoint as {@code ip:port} */
        String endpoint() {
            return UdConfig.ipv4Text(ipv4) + ":" + port;
        }
    }

    private Advert() {
    }

    /** @return topic ids one advert of at most {@code payloadBytes} carries (room for the MAC is always kept) */
    static int maxTopicsPerAdvert(final int payloadBytes) {
        return (Math.min(payloadBytes, MAX_BYTES) - HEADER_BYTES - MAC_BYTES) / 4;
    }

    /**
     * Writes one page of an advert into {@code out} from its position 0 (little-endian).
     *
     * @param key    the bus secret, or null without one (no MAC)
     * @param domain {@code rdma.domain}, bound by the MAC
     * @return the datagram's length in bytes
     */
    static int encode(final ByteBuffer out, final long nodeId, final int ipv4, final int port, final int page, final int pages,
                      final int[] topics, final int from, final int count, final byte[] key, final String domain) {
        if (pages < 1 || pages > MAX_PAGES || page < 0 || page >= pages || count < 0 || count > 0xFFFF) {
            throw new IllegalArgumentException("page " + page + " of " + pages + ", " + count + " topics");
        }
        int body = HEADER_BYTES + 4 * count;
        int length = body + (key != null ? MAC_BYTES : 0);
        if (length > out.capacity()) {
            throw new IllegalArgumentException(count + " topics do not fit " + out.capacity() + " bytes");
        }
        out.order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(0, Wire.ADVERT);
        out.putInt(MAGIC_OFFSET, MAGIC);
        out.put(VERSION_OFFSET, (byte) VERSION);
        out.put(FLAGS_OFFSET, (byte) (key != null ? FLAG_MAC : 0));
        out.put(PAGE_OFFSET, (byte) page);
        out.put(PAGES_OFFSET, (byte) pages);
        out.putLong(NODE_OFFSET, nodeId);
        out.putInt(IPV4_OFFSET, ipv4);
        out.putShort(PORT_OFFSET, (short) port);
        out.putShort(COUNT_OFFSET, (short) count);
        for (int i = 0; i < count; i++) {
            out.putInt(HEADER_BYTES + 4 * i, topics[from + i]);
        }
        if (key != null) {
            byte[] mac = mac(key, domain, out, body);
            for (int i = 0; i < MAC_BYTES; i++) {
                out.put(body + i, mac[i]);
            }
        }
        return length;
    }

    /**
     * Checks every field of a received datagram and, with a bus secret, its MAC (constant-time compare). Never throws
     * for any content.
     *
     * @param datagram the datagram's bytes (envelope included)
     * @param length   its length
     * @param key      this node's bus secret, or null without one
     * @param domain   this node's {@code rdma.domain}
     * @param result   receives the outcome: {@link #OK}, {@link #MALFORMED} or {@link #REJECTED} in element 0
     * @return the advert if {@link #OK}, else null
     */
    static Decoded decode(final byte[] datagram, final int length, final byte[] key, final String domain, final int[] result) {
        result[0] = MALFORMED;
        if (datagram == null || length < HEADER_BYTES || length > datagram.length || length > MAX_BYTES) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(datagram, 0, length).order(ByteOrder.LITTLE_ENDIAN);
        int flags = b.get(FLAGS_OFFSET) & 0xFF;
        int page = b.get(PAGE_OFFSET) & 0xFF;
        int pages = b.get(PAGES_OFFSET) & 0xFF;
        long nodeId = b.getLong(NODE_OFFSET);
        int ipv4 = b.getInt(IPV4_OFFSET);
        int port = b.getShort(PORT_OFFSET) & 0xFFFF;
        int count = b.getShort(COUNT_OFFSET) & 0xFFFF;
        if (b.getInt(0) != Wire.ADVERT || b.getInt(MAGIC_OFFSET) != MAGIC || (b.get(VERSION_OFFSET) & 0xFF) != VERSION
                || (flags & ~FLAG_MAC) != 0 || pages < 1 || pages > MAX_PAGES || page >= pages || nodeId == 0
                || ipv4 == 0 || ipv4 == -1 || (ipv4 >>> 28) == 0xE || port == 0) {
            return null;
        }
        boolean hasMac = (flags & FLAG_MAC) != 0;
        int body = HEADER_BYTES + 4 * count;
        if (length != body + (hasMac ? MAC_BYTES : 0)) {
            return null;
        }
        int[] topics = new int[count];
        for (int i = 0; i < count; i++) {
            topics[i] = b.getInt(HEADER_BYTES + 4 * i);
            if (topics[i] == 0) {
                return null;
            }
        }
        result[0] = REJECTED;
        if (key != null) {
            if (!hasMac) {
                return null; // this bus has a secret: an advert without a MAC could make us dial anything
            }
            byte[] expected = mac(key, domain, b, body);
            byte[] got = new byte[MAC_BYTES];
            System.arraycopy(datagram, body, got, 0, MAC_BYTES);
            byte[] want = new byte[MAC_BYTES];
            System.arraycopy(expected, 0, want, 0, MAC_BYTES);
            if (!MessageDigest.isEqual(want, got)) {
                return null;
            }
        } else if (hasMac) {
            return null; // a node with a secret: we never talk to it without one (its handshake would be refused)
        }
        result[0] = OK;
        return new Decoded(nodeId, ipv4, port, page, pages, topics);
    }

    private static byte[] mac(final byte[] key, final String domain, final ByteBuffer datagram, final int body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(LABEL);
            mac.update(domain.getBytes(StandardCharsets.UTF_8));
            mac.update((byte) 0);
            ByteBuffer content = datagram.duplicate();
            content.clear().limit(body);
            mac.update(content);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is always available", e);
        }
    }
}
