package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

import org.junit.jupiter.api.Test;

/** The discovery ADVERT datagram: layout, bounds checks, the bus-secret MAC, and a fuzz of the decoder (pure logic). */
class AdvertTest {
    private static final byte[] KEY = "a bus secret of sixteen bytes or more".getBytes(StandardCharsets.UTF_8);
    private static final byte[] OTHER = "another bus secret, also long enough".getBytes(StandardCharsets.UTF_8);
    private static final String DOMAIN = "desk-a";
    private static final int IP = UdConfig.ipv4("10.77.0.12");

    private static byte[] encode(final byte[] key, final int[] topics) {
        ByteBuffer out = ByteBuffer.allocate(1024);
        int n = Advert.encode(out, 0x1234_5678_9ABC_DEF0L, IP, 7801, 0, 1, topics, 0, topics.length, key, DOMAIN);
        return Arrays.copyOf(out.array(), n);
    }

    private static Advert.Decoded decode(final byte[] d, final byte[] key, final int expected) {
        int[] r = new int[1];
        Advert.Decoded a = Advert.decode(d, d.length, key, DOMAIN, r);
        assertEquals(expected, r[0], "outcome");
        if (expected == Advert.OK) {
            assertNotNull(a);
        } else {
            assertNull(a);
        }
        return a;
    }

    @Test
    void roundTripWithAndWithoutTheSecret() {
        int[] topics = {7, -3, 1 << 30};
        byte[] signed = encode(KEY, topics);
        assertEquals(Advert.HEADER_BYTES + 12 + Advert.MAC_BYTES, signed.length);
        assertEquals(Wire.ADVERT, ByteBuffer.wrap(signed).order(ByteOrder.LITTLE_ENDIAN).getInt(0), "starts with the UD envelope type");
        Advert.Decoded a = decode(signed, KEY, Advert.OK);
        assertEquals(0x1234_5678_9ABC_DEF0L, a.nodeId());
        assertEquals("10.77.0.12:7801", a.endpoint());
        assertEquals(0, a.page());
        assertEquals(1, a.pages());
        assertArrayEquals(topics, a.topics());
        byte[] plain = encode(null, topics);
        assertEquals(Advert.HEADER_BYTES + 12, plain.length);
        assertArrayEquals(topics, decode(plain, null, Advert.OK).topics());
        assertEquals(0, decode(encode(null, new int[0]), null, Advert.OK).topics().length, "a node publishing nothing yet");
    }

    @Test
    void theMacBindsSecretDomainAndContent() {
        byte[] signed = encode(KEY, new int[] {7, 8});
        decode(signed, OTHER, Advert.REJECTED);
        int[] r = new int[1];
        assertNull(Advert.decode(signed, signed.length, KEY, "desk-b", r), "another rdma.domain");
        assertEquals(Advert.REJECTED, r[0]);
        decode(encode(null, new int[] {7, 8}), KEY, Advert.REJECTED); // no MAC where the bus has a secret
        decode(signed, null, Advert.REJECTED); // a MAC where we have none: we never talk to a node with a secret
        // any change of the signed content or of the MAC is rejected (or, for a bounds field, malformed), never accepted
        for (int i = 0; i < signed.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] t = signed.clone();
                t[i] ^= (byte) (1 << bit);
                int[] res = new int[1];
                assertNull(Advert.decode(t, t.length, KEY, DOMAIN, res), "byte " + i + " bit " + bit);
                assertTrue(res[0] == Advert.REJECTED || res[0] == Advert.MALFORMED);
            }
        }
        // the address and the topics are signed: changed in place, the MAC no longer matches
        byte[] moved = signed.clone();
        ByteBuffer.wrap(moved).order(ByteOrder.LITTLE_ENDIAN).putInt(Advert.IPV4_OFFSET, UdConfig.ipv4("10.66.6.6"));
        decode(moved, KEY, Advert.REJECTED);
    }

    @Test
    void everyBoundIsChecked() {
        byte[] good = encode(null, new int[] {5, 6});
        decode(withInt(good, 0, Wire.DATA), null, Advert.MALFORMED);
        decode(withInt(good, 0, Wire.ADVERT | 0x100), null, Advert.MALFORMED); // reserved envelope byte
        decode(withInt(good, Advert.MAGIC_OFFSET, 0x12345678), null, Advert.MALFORMED);
        decode(withByte(good, Advert.VERSION_OFFSET, 2), null, Advert.MALFORMED);
        decode(withByte(good, Advert.FLAGS_OFFSET, 2), null, Advert.MALFORMED);
        decode(withByte(good, Advert.PAGES_OFFSET, 0), null, Advert.MALFORMED);
        decode(withByte(good, Advert.PAGES_OFFSET, Advert.MAX_PAGES + 1), null, Advert.MALFORMED);
        decode(withByte(good, Advert.PAGE_OFFSET, 1), null, Advert.MALFORMED); // page 1 of 1
        decode(withLong(good, Advert.NODE_OFFSET, 0), null, Advert.MALFORMED);
        decode(withInt(good, Advert.IPV4_OFFSET, 0), null, Advert.MALFORMED);
        decode(withInt(good, Advert.IPV4_OFFSET, -1), null, Advert.MALFORMED);
        decode(withInt(good, Advert.IPV4_OFFSET, UdConfig.ipv4("239.1.1.1")), null, Advert.MALFORMED);
        decode(withShort(good, Advert.PORT_OFFSET, 0), null, Advert.MALFORMED);
        decode(withShort(good, Advert.COUNT_OFFSET, 3), null, Advert.MALFORMED); // more topics than bytes
        decode(withShort(good, Advert.COUNT_OFFSET, 1), null, Advert.MALFORMED); // fewer
        decode(withInt(good, Advert.HEADER_BYTES, 0), null, Advert.MALFORMED); // topic id 0
        decode(Arrays.copyOf(good, good.length + 1), null, Advert.MALFORMED); // trailing byte
        for (int len = 0; len < good.length; len++) {
            int[] r = new int[1];
            assertNull(Advert.decode(good, len, null, DOMAIN, r), "truncated to " + len);
            assertEquals(Advert.MALFORMED, r[0]);
        }
        int[] r = new int[1];
        assertNull(Advert.decode(good, good.length + 1, null, DOMAIN, r), "length beyond the array");
        assertNull(Advert.decode(null, 0, null, DOMAIN, r));
        assertNull(Advert.decode(new byte[8192], 8192, null, DOMAIN, r), "beyond the largest datagram");
    }

    @Test
    void pagesAndTheTopicBoundPerDatagram() {
        int per = Advert.maxTopicsPerAdvert(1024);
        assertEquals((1024 - 28 - 16) / 4, per);
        int[] many = new int[per];
        Arrays.fill(many, 9);
        ByteBuffer out = ByteBuffer.allocate(1024);
        int n = Advert.encode(out, 1, IP, 7800, 2, 3, many, 0, per, KEY, DOMAIN);
        assertTrue(n <= 1024, "a full page with its MAC fits the datagram: " + n);
        Advert.Decoded a = decode(Arrays.copyOf(out.array(), n), KEY, Advert.OK);
        assertEquals(2, a.page());
        assertEquals(3, a.pages());
        assertEquals(per, a.topics().length);
        assertThrows(IllegalArgumentException.class, () -> Advert.encode(out, 1, IP, 7800, 0, 1, new int[per + 1], 0, per + 1, KEY, DOMAIN));
        assertThrows(IllegalArgumentException.class, () -> Advert.encode(out, 1, IP, 7800, 0, Advert.MAX_PAGES + 1, many, 0, 1, KEY, DOMAIN));
        assertTrue(Advert.maxTopicsPerAdvert(256) >= 50, "the smallest rdma.ud.payload.bytes still carries a useful page");
    }

    /** Random datagrams and random mutations of valid ones: the decoder never throws and never accepts a forgery. */
    @Test
    void fuzzNeverThrowsAndNeverAcceptsWithoutTheSecret() {
        Random rnd = new Random(42);
        byte[] good = encode(KEY, new int[] {1, 2, 3, 4});
        int[] r = new int[1];
        for (int i = 0; i < 50_000; i++) {
            byte[] d;
            if (i % 2 == 0) {
                d = new byte[rnd.nextInt(200)];
                rnd.nextBytes(d);
                if (d.length >= 8 && rnd.nextBoolean()) {
                    ByteBuffer.wrap(d).order(ByteOrder.LITTLE_ENDIAN).putInt(0, Wire.ADVERT).putInt(Advert.MAGIC_OFFSET, Advert.MAGIC);
                }
            } else {
                d = good.clone();
                for (int k = 1 + rnd.nextInt(4); k > 0; k--) {
                    d[rnd.nextInt(d.length)] = (byte) rnd.nextInt();
                }
                if (Arrays.equals(d, good)) {
                    continue;
                }
            }
            Advert.Decoded a = Advert.decode(d, d.length, KEY, DOMAIN, r);
            assertNull(a, "accepted a datagram that the secret's holder did not sign");
        }
    }

    private static byte[] withInt(final byte[] d, final int at, final int v) {
        byte[] c = d.clone();
        ByteBuffer.wrap(c).order(ByteOrder.LITTLE_ENDIAN).putInt(at, v);
        return c;
    }

    private static byte[] withLong(final byte[] d, final int at, final long v) {
        byte[] c = d.clone();
        ByteBuffer.wrap(c).order(ByteOrder.LITTLE_ENDIAN).putLong(at, v);
        return c;
    }

    private static byte[] withShort(final byte[] d, final int at, final int v) {
        byte[] c = d.clone();
        ByteBuffer.wrap(c).order(ByteOrder.LITTLE_ENDIAN).putShort(at, (short) v);
        return c;
    }

    private static byte[] withByte(final byte[] d, final int at, final int v) {
        byte[] c = d.clone();
        c[at] = (byte) v;
        return c;
    }
}
