package io.rdmabus.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.time.Duration;

import io.rdmabus.Bus;
import io.rdmabus.Delivery;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.soak.fuzz.CheckedLongCodec;
import io.rdmabus.soak.fuzz.Fuzz;
import io.rdmabus.spi.StaticSeedDiscovery;

import org.agrona.concurrent.UnsafeBuffer;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.Disposable;

/**
 * Fuzzes the TCP transport's stream framing decoder (PeerConnection.process) over real loopback sockets: a raw peer
 * speaks the protocol of {@code tcp-fallback/README.md} with random write boundaries, sometimes mutated or replaced by
 * garbage. Per connection, a model decoder of the documented protocol says whether the stream breaks the framing; the
 * transport must count exactly one protocol error, handshake rejection or refused peer for such a stream and none otherwise, never
 * block or throw into the subscriber, and still deliver every valid stream completely and in order. A stream with one
 * mutation (a bit, a byte or four bytes in one place) never reports more lost than it had frames (docs/wire-format.md,
 * sequence rule: a corrupt sequence is malformed, not a gap).
 */
class TcpStreamFuzzTest {
    private static final int MAX_FRAME = 4096;
    private static final int MAX_MESSAGE = TcpProtocol.maxMessageLength(MAX_FRAME);
    /** Cases run past the time budget at most, until both a valid and a framing-breaking stream were seen. */
    private static final int MIN_CASES_CAP = 64;
    /** How long a case waits for the transport to deliver a valid stream, and to close a connection. */
    private static final Duration STREAM_WAIT = Duration.ofSeconds(15);
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(15);

    private static long countOf(final List<Received<Long>> got, final int session) {
        return got.stream().filter(r -> r.sessionId() == session).count();
    }

    /** Waits for the condition; fails with the message, which says how long it waited, if it did not hold by then. */
    private static void awaitOrFail(final Fuzz fuzz, final Duration atMost, final BooleanSupplier condition, final Supplier<String> what) {
        try {
            Awaitility.await().atMost(atMost).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1)).until(condition::getAsBoolean);
        } catch (final ConditionTimeoutException timeout) {
            fail(fuzz.fail(what.get() + " (waited " + atMost.toSeconds() + " s)"));
        }
    }

    /** @return what the transport counts for a stream that breaks the framing: protocol errors, rejections, refusals */
    private static long refusals(final TcpTransport transport) {
        return transport.protocolErrors() + transport.handshakeRejections() + transport.refusedPeers();
    }

    private static ByteBuffer le(final int capacity) {
        return ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static byte[] hello(final long nodeId) {
        final byte[] name = "fuzz-raw".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        final int length = 1 + TcpProtocol.HELLO_FIXED + 2 + name.length;
        return le(4 + length).putInt(length).put((byte) TcpProtocol.TYPE_HELLO).putInt(TcpProtocol.MAGIC).putShort((short) TcpProtocol.VERSION)
            .putLong(nodeId).putInt(MAX_FRAME).put((byte) 0).put(new byte[TcpProtocol.NONCE_BYTES]).putShort((short) name.length).put(name)
            .array();
    }

    private static byte[] data(final int topicId, final int sessionId, final long sequence, final long value) {
        final byte[] frame = new byte[FrameHeader.LENGTH + CheckedLongCodec.LENGTH];
        final UnsafeBuffer v = new UnsafeBuffer(frame);
        FrameHeader.write(v, 0, FrameHeader.FLAGS_UNFRAGMENTED, frame.length, topicId, sessionId, sequence, System.nanoTime());
        new CheckedLongCodec().encode(value, v, FrameHeader.LENGTH);
        return le(4 + 1 + 4 + frame.length).putInt(1 + 4 + frame.length).put((byte) TcpProtocol.TYPE_DATA).putInt(topicId).put(frame).array();
    }

    private static byte[] unsubscribe(final int topicId) {
        return le(9).putInt(5).put((byte) TcpProtocol.TYPE_UNSUBSCRIBE).putInt(topicId).array();
    }

    private static String threadStacks() {
        final StringBuilder out = new StringBuilder("\nthreads:");
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            out.append("\n  \"").append(thread.getName()).append("\" ").append(thread.getState());
            for (int i = 0; i < Math.min(stack.length, 10); i++) {
                out.append("\n    at ").append(stack[i]);
            }
        });
        return out.toString();
    }

    /** The documented framing rules, independent of PeerConnection: true if the bytes break them before they end. */
    static boolean modelBreaksFraming(final byte[] s) {
        final ByteBuffer in = ByteBuffer.wrap(s).order(ByteOrder.LITTLE_ENDIAN);
        boolean handshaken = false;
        int at = 0;
        while (s.length - at >= 4) {
            final int length = in.getInt(at);
            if (length < 1 || length > MAX_MESSAGE || !handshaken && length > TcpProtocol.MAX_CONTROL_LENGTH) {
                return true; // out of range (a first message, the hello, is never longer than a control message)
            }
            if (s.length - at - 4 < length) {
                return false; // incomplete: the peer closed mid-message
            }
            final int type = s[at + 4] & 0xFF;
            final int body = length - 1;
            final int b = at + 5;
            if (!handshaken) {
                if (type != TcpProtocol.TYPE_HELLO || body < 6 || in.getInt(b) != TcpProtocol.MAGIC) {
                    return true;
                }
                if ((in.getShort(b + 4) & 0xFFFF) != TcpProtocol.VERSION) {
                    return true; // rejected: another protocol version
                }
                if (body < TcpProtocol.HELLO_FIXED + 2 || in.getInt(b + 14) != MAX_FRAME) {
                    return true; // truncated hello, or another max frame size: rejected
                }
                if ((s[b + 18] & TcpProtocol.FLAG_SECRET) != 0) {
                    return true; // refused: the peer claims a bus secret, the transport under test has none
                }
                handshaken = true;
            } else {
                switch (type) {
                    case TcpProtocol.TYPE_DATA -> {
                        if (body < 4 || body - 4 > MAX_FRAME) {
                            return true;
                        }
                    }
                    case TcpProtocol.TYPE_SUBSCRIBE -> {
                        if (body < 5) {
                            return true;
                        }
                    }
                    case TcpProtocol.TYPE_UNSUBSCRIBE -> {
                        if (body < 4) {
                            return true;
                        }
                    }
                    default -> {
                        return true;
                    }
                }
            }
            at += 4 + length;
        }
        return false;
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void framingDecoderDropsBadStreamsAndDeliversGoodOnes() throws Exception {
        final Fuzz fuzz = Fuzz.start("tcp stream framing");
        final Topic<Long> topic = Topic.of("fuzz.tcp", new CheckedLongCodec(), Delivery.RELIABLE);
        final TcpTransport transport = new TcpTransport(TcpTransportConfig.from(Map.of(TcpTransportConfig.MAX_FRAME_BYTES, String.valueOf(MAX_FRAME),
            TcpTransportConfig.HANDSHAKE_TIMEOUT_MS, "2000")));
        final List<Received<Long>> got = new CopyOnWriteArrayList<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        long validStreams = 0;
        long badStreams = 0;
        long okMutated = 0;
        final Map<Integer, Integer> oneMutation = new HashMap<>(); // session of a stream with one mutation -> its frames
        try (Bus bus = Bus.builder().name("fuzz-tcp").transport(transport).discovery(StaticSeedDiscovery.none()).build()) {
            final Disposable sub = bus.subscribeReceived(topic, SubscribeOptions.defaults()).subscribe(got::add, error::set);
            final InetSocketAddress address = transport.boundAddress();
            // the time budget, but never fewer cases than it takes to see a valid and a framing-breaking stream (a loaded
            // host may run only a few cases in the budget, all of one kind)
            while (fuzz.more() || (validStreams == 0 || badStreams == 0) && fuzz.iteration() < MIN_CASES_CAP) {
                final SplittableRandom rnd = fuzz.nextCase();
                final StreamCase c = StreamCase.generate(rnd, topic.topicId());
                final int session = c.session();
                final int count = c.count();
                final int mode = c.mode();
                final byte[] bytes = c.bytes();
                if (c.oneMutation()) {
                    oneMutation.put(session, count);
                }
                final boolean breaks = modelBreaksFraming(bytes);
                final int length = bytes.length;
                final long errorsBefore = refusals(transport);
                final long closedBefore = transport.connectionsClosed();
                final long before = countOf(got, session);
                try (Socket socket = new Socket()) {
                    socket.connect(address, 2000);
                    socket.setSoTimeout(2000);
                    final OutputStream out = socket.getOutputStream();
                    int at = 0;
                    try {
                        while (at < bytes.length) {
                            final int n = Math.min(bytes.length - at, 1 + rnd.nextInt(rnd.nextBoolean() ? 7 : 300));
                            out.write(bytes, at, n);
                            out.flush();
                            at += n;
                        }
                    } catch (final IOException closedByTransport) {
                        assertTrue(breaks, fuzz.fail("the transport closed a connection whose stream is valid: " + closedByTransport));
                    }
                    // The socket stays open until the transport has handled the stream: this socket never reads the
                    // transport's hello, so closing it resets the connection, and a reset may discard bytes not read yet.
                    if (breaks) {
                        awaitOrFail(fuzz, STREAM_WAIT, () -> refusals(transport) > errorsBefore,
                            () -> "stream breaks the framing (mode " + mode + ", " + length + " bytes), the transport counted no "
                                + "protocol error or rejection");
                    } else if (mode == 0) {
                        awaitOrFail(fuzz, STREAM_WAIT, () -> countOf(got, session) - before >= count,
                            () -> "valid stream of " + count + " frames not delivered: " + (countOf(got, session) - before)
                                + " arrived");
                    }
                }
                // Every case's connection is accepted, then closed by its peer or by the transport: the transport forgets it
                // (no leaked peer, nothing queued) and only then counts it closed, so waiting for that count is waiting
                // for this case's connection, whether or not the server had registered it when the socket closed.
                awaitOrFail(fuzz, CLOSE_WAIT, () -> transport.connectionsClosed() > closedBefore,
                    () -> "the transport did not close its end of the raw connection (mode " + mode + ", breaks " + breaks + ", "
                        + length + " bytes): peers " + transport.describeConnections() + "\nbus " + bus.stats() + threadStacks());
                if (transport.connectedPeers() != 0) {
                    fail(fuzz.fail("the transport closed the raw connection but still counts it as a peer (mode " + mode + ", breaks "
                        + breaks + ", " + length + " bytes): " + transport.describeConnections()));
                }
                final long errors = refusals(transport) - errorsBefore;
                if (errors != (breaks ? 1 : 0)) {
                    fail(fuzz.fail("stream " + (breaks ? "breaks" : "keeps") + " the framing, the transport counted " + errors
                        + " protocol errors/rejections/refusals by the time it closed the connection (mode " + mode + ", " + bytes.length
                        + " bytes)"));
                }
                if (mode == 0) {
                    final List<Long> values = got.stream().filter(r -> r.sessionId() == session).map(Received::value).skip(before).toList();
                    assertEquals(count, values.size(), fuzz.fail("valid stream not fully delivered: " + values));
                    for (int i = 0; i < count; i++) {
                        assertEquals(i, values.get(i), fuzz.fail("valid stream out of order: " + values));
                    }
                    validStreams++;
                } else if (breaks) {
                    badStreams++;
                } else {
                    okMutated++;
                }
                assertNull(error.get(), fuzz.fail("the subscriber got an error: " + error.get()));
            }
            final var stats = bus.stats().subscriptions().get(0);
            System.out.println(fuzz.summary("validStreams=" + validStreams + " streamsBreakingFraming=" + badStreams
                + " mutatedButFramed=" + okMutated + " protocolErrors=" + transport.protocolErrors() + " rejections="
                + transport.handshakeRejections() + " stats=" + stats));
            assertTrue(validStreams > 0 && badStreams > 0, fuzz.fail("generator too narrow"));
            // one mutation cannot claim more loss than its stream had frames (two frames forged in concert can: a jump)
            for (final Map.Entry<Integer, Integer> stream : oneMutation.entrySet()) {
                final long lost = got.stream().filter(r -> r.sessionId() == stream.getKey()).mapToLong(Received::lostBefore).sum();
                assertTrue(lost <= stream.getValue(), fuzz.fail("a stream of " + stream.getValue() + " frames with one mutation reported "
                    + lost + " lost: " + stats));
            }
            sub.dispose();
        }
    }

    /**
     * One case's stream: a hello, then {@code count} data frames of {@code session} (now and then an unsubscribe of a
     * topic nobody publishes), sent as is (mode 0), with 1 to 4 bytes mutated (mode 1) or cut and spliced with garbage
     * (mode 2).
     */
    private record StreamCase(int session, int count, int mode, byte[] bytes, boolean oneMutation) {
        static StreamCase generate(final SplittableRandom rnd, final int topicId) throws IOException {
            final int session = rnd.nextInt() | 0x4000_0000;
            final int count = 1 + rnd.nextInt(40);
            final ByteArrayOutputStream stream = new ByteArrayOutputStream();
            stream.write(hello(rnd.nextLong()));
            for (int i = 0; i < count; i++) {
                stream.write(data(topicId, session, i, i));
                if (rnd.nextInt(16) == 0) {
                    stream.write(unsubscribe(rnd.nextInt() | 1)); // a topic nobody here publishes: harmless
                }
            }
            byte[] bytes = stream.toByteArray();
            final int mode = rnd.nextInt(3);
            boolean oneMutation = false;
            if (mode == 1) {
                final int mutations = 1 + rnd.nextInt(4);
                Fuzz.mutate(rnd, bytes, mutations);
                oneMutation = mutations == 1;
            } else if (mode == 2) {
                final int keep = rnd.nextInt(bytes.length);
                final byte[] garbage = Fuzz.bytes(rnd, rnd.nextInt(64));
                final byte[] spliced = java.util.Arrays.copyOf(bytes, keep + garbage.length);
                System.arraycopy(garbage, 0, spliced, keep, garbage.length);
                bytes = spliced;
            }
            return new StreamCase(session, count, mode, bytes, oneMutation);
        }
    }
}
