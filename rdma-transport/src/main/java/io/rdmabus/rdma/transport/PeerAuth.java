package io.rdmabus.rdma.transport;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;

import io.rdmabus.spi.BusSecret;

/**
 * The connect handshake's private data and the HMAC-SHA256 challenge-response (control path only; allocation is fine).
 *
 * <pre>
 * connect request (connector -> acceptor, RC REQ private data, at most 56 bytes):
 *   "RBUS2" | flags u8 (bit 0: has a bus secret) | node id i64 | listen IPv4 4 bytes | listen port u16 | nonce 16 bytes
 * accept reply (acceptor -> connector, RC REP private data):
 *   "RBUS2" | flags u8 | node id i64 | nonce 16 bytes | proof 32 bytes (zeros without a secret)
 * first RC message of the connector (with a secret): AUTH, its proof (32 bytes) after the 8-byte envelope.
 *
 * proof = HMAC-SHA256(secret, "rdma-bus auth v1" | role u8 ('A' acceptor proves, 'C' connector proves)
 *                             | prover id i64 | verifier id i64 | verifier's nonce | prover's nonce)
 * </pre>
 * Each side proves knowledge of the secret over the other side's fresh nonce (no replay); the role and both ids are
 * inside the MAC, so a proof cannot be reflected back to its sender or reused on another pair.
 */
final class PeerAuth {
    static final byte[] MAGIC = "RBUS2".getBytes(StandardCharsets.US_ASCII);
    static final int NONCE_BYTES = 16;
    static final int PROOF_BYTES = 32;
    static final int FLAG_SECRET = 1;
    static final int REQUEST_BYTES = MAGIC.length + 1 + 8 + 4 + 2 + NONCE_BYTES;
    static final int REPLY_BYTES = MAGIC.length + 1 + 8 + NONCE_BYTES + PROOF_BYTES;
    static final byte ROLE_ACCEPTOR = 'A';
    static final byte ROLE_CONNECTOR = 'C';
    private static final byte[] LABEL = "rdma-bus auth v1".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A parsed connect request. */
    record Request(int flags, long nodeId, byte[] listenIp, int listenPort, byte[] nonce) {
        String listenEndpoint() {
            return (listenIp[0] & 0xFF) + "." + (listenIp[1] & 0xFF) + "." + (listenIp[2] & 0xFF) + "." + (listenIp[3] & 0xFF) + ":" + listenPort;
        }
    }

    /** A parsed accept reply. */
    record Reply(int flags, long nodeId, byte[] nonce, byte[] proof) {
    }

    private PeerAuth() {
    }

    static byte[] nonce() {
        byte[] n = new byte[NONCE_BYTES];
        RANDOM.nextBytes(n);
        return n;
    }

    static byte[] request(final int flags, final long nodeId, final byte[] listenIp, final int listenPort, final byte[] nonce) {
        ByteBuffer b = ByteBuffer.allocate(REQUEST_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.put(MAGIC).put((byte) flags).putLong(nodeId).put(listenIp, 0, 4).putShort((short) listenPort).put(nonce);
        return b.array();
    }

    /** @return the request, or null if {@code data} is not one (another protocol or version) */
    static Request parseRequest(final byte[] data) {
        if (data == null || data.length < REQUEST_BYTES || !hasMagic(data)) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
        b.position(MAGIC.length);
        int flags = b.get() & 0xFF;
        long id = b.getLong();
        byte[] ip = new byte[4];
        b.get(ip);
        int port = b.getShort() & 0xFFFF;
        byte[] nonce = new byte[NONCE_BYTES];
        b.get(nonce);
        return new Request(flags, id, ip, port, nonce);
    }

    static byte[] reply(final int flags, final long nodeId, final byte[] nonce, final byte[] proof) {
        ByteBuffer b = ByteBuffer.allocate(REPLY_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.put(MAGIC).put((byte) flags).putLong(nodeId).put(nonce).put(proof == null ? new byte[PROOF_BYTES] : proof);
        return b.array();
    }

    /** @return the reply, or null if {@code data} is not one */
    static Reply parseReply(final byte[] data) {
        if (data == null || data.length < REPLY_BYTES || !hasMagic(data)) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
        b.position(MAGIC.length);
        int flags = b.get() & 0xFF;
        long id = b.getLong();
        byte[] nonce = new byte[NONCE_BYTES];
        b.get(nonce);
        byte[] proof = new byte[PROOF_BYTES];
        b.get(proof);
        return new Reply(flags, id, nonce, proof);
    }

    private static boolean hasMagic(final byte[] data) {
        for (int i = 0; i < MAGIC.length; i++) {
            if (data[i] != MAGIC[i]) {
                return false;
            }
        }
        return true;
    }

    /** @return the proof above, the HMAC-SHA256 of the bus secret ({@link BusSecret#hmac}) */
    static byte[] proof(final BusSecret secret, final byte role, final long proverId, final long verifierId, final byte[] verifierNonce,
                        final byte[] proverNonce) {
        return secret.hmac(LABEL, new byte[] {role},
                ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(proverId).putLong(verifierId).array(), verifierNonce, proverNonce);
    }

    /** Constant-time comparison ({@link BusSecret#matches}). */
    static boolean matches(final byte[] expected, final byte[] actual) {
        return BusSecret.matches(expected, actual);
    }
}
