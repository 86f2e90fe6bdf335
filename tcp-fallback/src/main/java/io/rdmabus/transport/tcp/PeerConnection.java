package io.rdmabus.transport.tcp;

import java.io.IOException;
import java.net.SocketAddress;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.concurrent.ScheduledFuture;
import io.rdmabus.spi.BusSecret;
import io.rdmabus.spi.SubscriptionSink;

import org.agrona.collections.Int2ObjectHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One TCP connection to a peer node, either accepted or dialled to a seed; the first handler of its channel's
 * pipeline (behind netty's {@code SslHandler} with TLS), so it sees every byte and reactor-netty's inbound bridge sees none.
 *
 * <p>Handshake, on the event loop: both sides send HELLO; after the peer's HELLO, with a bus secret, both send AUTH and
 * wait for the peer's; only then is the connection registered with the transport and are subscriptions exchanged.
 * Until then every other message refuses the peer, and the whole handshake is bounded by
 * {@link TcpTransportConfig#handshakeTimeoutMs()}.
 *
 * <p>Reading is manual ({@code autoRead} off, one {@code read()} at a time). Reliable flow control is per topic
 * ({@link TcpProtocol}, SUBSCRIBE and CREDIT): when a subscription's sink answers {@link SubscriptionSink#BACK_PRESSURE}
 * the frame is copied into its topic's queue ({@link InboundTopics}) and offered again after a short delay, while the
 * connection goes on reading and delivering other topics; frames of that topic queue behind it (in order). The queue is
 * bounded by the window this node granted the publisher, which stops sending the topic once its credit is used up;
 * bytes are given back in CREDIT messages as the subscriptions take frames. A peer that sends past its credit is a
 * protocol error.
 *
 * <p>Writing goes through {@link ConnectionOutbound}: publishers write DATA in place into its ring, the event loop
 * copies it out in batches (one flush per batch); the ring is not drained while Netty's channel is unwritable, so a
 * peer that stops reading back-pressures its publishers.
 */
final class PeerConnection extends ChannelDuplexHandler {
    private static final Logger LOG = LoggerFactory.getLogger(PeerConnection.class);
    private static final int INITIAL_CUMULATION = 64 * 1024;
    private static final String TLS_HINT = " (every node needs " + TcpTlsConfig.TLS + "=true and a certificate issued by a CA in the other's "
        + TcpTlsConfig.TRUST + ")";

    private final TcpTransport transport;
    /** The seed this connection was dialled for, or {@code null} if it was accepted. */
    final TcpTransport.Seed seed;
    private final int maxFrameBytes;
    private final int maxMessageLength;

    private ChannelHandlerContext ctx;
    private Channel channel;
    private EventLoop loop;

    /** What this connection sends (publishers claim DATA in its ring; the event loop writes). */
    final ConnectionOutbound outbound;
    private volatile boolean inactive;

    // ---- inbound, event loop only
    private ByteBuf cumulation;
    /** Set when the connection is being closed: nothing more is processed. */
    private boolean stopped;
    /** Reliable topics' flow control on this connection; created once the channel is active. */
    private InboundTopics inboundTopics;
    /** The peer's subscriptions to this node's topics (publishing side), by topic id. */
    private final Int2ObjectHashMap<RemoteSubscriber> remoteTopics = new Int2ObjectHashMap<>();
    private ScheduledFuture<?> handshakeTimeout;
    /** This node's HELLO nonce: the peer proves the bus secret over it. */
    private final byte[] localNonce = TcpProtocol.nonce();
    /** The peer's HELLO arrived and was valid. */
    private boolean helloSeen;
    /** The AUTH proof the peer must send (with a bus secret, between its HELLO and its AUTH), else null. */
    private byte[] expectedProof;
    /** TLS: the TLS handshake completed. */
    private volatile boolean tlsDone;
    /** TLS: the TLS handshake failure was counted already (it arrives both as an event and as an exception). */
    private boolean tlsRefused;
    private volatile boolean handshaken;
    /** This connection's counters, one slot per {@link TcpConnectionCounter} (each descriptor names its writer thread). */
    private final AtomicLongArray counters = new AtomicLongArray(TcpConnectionCounter.values().length);
    /** The transport's id for this connection, set once at the handshake (under the transport's lock); 0 before. */
    volatile long connectionId;

    volatile long remoteNodeId;
    volatile String remoteBusName = "?";
    /** Set when this connection lost the tie-break against another connection to the same node. */
    volatile boolean duplicate;
    /** Set when the peer was refused for good (itself, another protocol version). */
    volatile boolean rejected;

    PeerConnection(final TcpTransport transport, final TcpTransport.Seed seed) {
        this.transport = transport;
        this.seed = seed;
        this.maxFrameBytes = transport.config().maxFrameBytes();
        this.maxMessageLength = TcpProtocol.maxMessageLength(maxFrameBytes);
        this.outbound = new ConnectionOutbound(this::countOut, ConnectionOutbound.capacityFor(transport.config().outboundBufferBytes(), maxFrameBytes));
    }

    // ------------------------------------------------------------------ lifecycle

    @Override
    public void handlerAdded(final ChannelHandlerContext context) {
        this.ctx = context;
        this.channel = context.channel();
        this.loop = channel.eventLoop();
        outbound.attach(context);
        transport.onChannelAdded(this);
        channel.closeFuture().addListener(future -> transport.onChannelGone(this));
    }

    @Override
    public void channelActive(final ChannelHandlerContext context) {
        context.fireChannelActive(); // reactor-netty sets up its connection (and turns autoRead off) here
        channel.config().setAutoRead(false);
        if (transport.isClosed()) {
            context.close();
            return;
        }
        cumulation = context.alloc().heapBuffer(INITIAL_CUMULATION);
        inboundTopics = new InboundTopics(transport, transport.config().topicWindowBytes(), context.alloc(), loop, this::send,
            () -> inactive || stopped);
        final int flags = transport.config().secret().enabled() ? TcpProtocol.FLAG_SECRET : 0;
        send(TcpProtocol.hello(context.alloc(), transport.nodeId(), maxFrameBytes, flags, localNonce, transport.busName()));
        handshakeTimeout = loop.schedule(this::onHandshakeTimeout, transport.config().handshakeTimeoutMs(), TimeUnit.MILLISECONDS);
        context.read();
    }

    private void onHandshakeTimeout() {
        if (handshaken || !channel.isActive()) {
            return;
        }
        final String missing = transport.config().tls().enabled() && !tlsDone ? "TLS handshake not complete"
            : !helloSeen ? "no hello" : "no AUTH (bus secret proof)";
        transport.onHandshakeTimeout(describe(), missing + " within " + transport.config().handshakeTimeoutMs() + " ms ("
            + TcpTransportConfig.HANDSHAKE_TIMEOUT_MS + ")");
        ctx.close();
        inactiveNow();
    }

    @Override
    public void userEventTriggered(final ChannelHandlerContext context, final Object event) {
        if (event instanceof SslHandshakeCompletionEvent completion) {
            if (completion.isSuccess()) {
                tlsDone = true;
            } else {
                tlsFailed(completion.cause());
            }
        }
        context.fireUserEventTriggered(event);
    }

    /**
     * A TLS handshake failure, told apart by what caused it: a peer without TLS, a certificate this node does not trust
     * or a fatal alert from the peer (it does not trust this node's) is a refused peer, counted once; a connection that
     * closed or was cancelled (a {@code user_canceled} or {@code close_notify} alert) during its handshake is only a
     * disconnect; any other TLS error is a protocol error.
     */
    private void tlsFailed(final Throwable cause) {
        if (tlsRefused) {
            return;
        }
        tlsRefused = true;
        final String alert = messageContaining(cause, "Received fatal alert");
        if (cause instanceof NotSslRecordException) {
            refuse("it does not speak TLS" + TLS_HINT);
        } else if (alert != null) {
            refuse("TLS handshake failed: " + abbreviate(alert) + TLS_HINT);
        } else if (inactive || !channel.isActive() || messageContaining(cause, "user_canceled") != null
            || messageContaining(cause, "close_notify") != null) {
            LOG.debug("tcp {}: connection {} closed during its TLS handshake: {}", transport.busName(), describe(), cause.toString());
            ctx.close();
        } else if (hasHandshakeException(cause)) {
            refuse("TLS handshake failed: " + abbreviate(cause.toString()) + TLS_HINT);
        } else {
            protocolError("TLS error during the handshake: " + abbreviate(cause.toString()));
        }
    }

    /** @return the first message in the cause chain that contains {@code part}, or null */
    private static String messageContaining(final Throwable cause, final String part) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            final String message = t.getMessage();
            if (message != null && message.contains(part)) {
                return message;
            }
        }
        return null;
    }

    private static boolean hasHandshakeException(final Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof SSLHandshakeException) {
                return true;
            }
        }
        return false;
    }

    private static String abbreviate(final String text) {
        return text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }

    private static SSLException sslCause(final Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof SSLException ssl) {
                return ssl;
            }
        }
        return null;
    }

    @Override
    public void channelInactive(final ChannelHandlerContext context) {
        inactive = true;
        if (handshakeTimeout != null) {
            handshakeTimeout.cancel(false);
        }
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
        if (inboundTopics != null) {
            inboundTopics.releaseAll();
        }
        outbound.close();
        remoteTopics.forEach((topicId, subscriber) -> transport.removeRemoteSubscriber(topicId, subscriber));
        remoteTopics.clear();
        transport.onConnectionClosed(this);
        context.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext context, final Throwable cause) {
        final SSLException ssl = sslCause(cause);
        if (ssl != null && !handshaken) {
            tlsFailed(ssl);
            context.close();
            return;
        }
        if (cause instanceof IOException) {
            LOG.debug("tcp {}: connection {} failed: {}", transport.busName(), describe(), cause.toString());
        } else {
            LOG.warn("tcp {}: connection {} failed, closing it", transport.busName(), describe(), cause);
        }
        context.close();
    }

    /** Closes the connection now (any thread). */
    void close() {
        final Channel ch = channel;
        if (ch != null) {
            ch.close();
        }
    }

    /** Writes everything queued, then closes (any thread). */
    void closeGracefully() {
        final Channel ch = channel;
        if (ch == null) {
            return;
        }
        try {
            loop.execute(() -> {
                outbound.drain(true);
                ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            });
        } catch (final RejectedExecutionException ex) {
            ch.close();
        }
    }

    /** @return the channel, or {@code null} before it was registered */
    Channel channel() {
        return channel;
    }

    boolean isInactive() {
        return inactive;
    }

    /** @return the node that dialled this connection */
    long initiatorNodeId() {
        return seed != null ? transport.nodeId() : remoteNodeId;
    }

    String describe() {
        final Channel ch = channel;
        final SocketAddress remote = ch == null ? null : ch.remoteAddress();
        return (seed != null ? "to " : "from ") + remote + " (" + remoteBusName + ")";
    }

    /** @return this connection's state for a diagnostic message (racy reads of loop-confined fields; any thread) */
    String describeState() {
        final Channel ch = channel;
        final InboundTopics topics = inboundTopics;
        return describe() + " handshaken=" + handshaken + " topicsWaiting=" + (topics == null ? 0 : topics.waitingTopics()) + " inactive="
            + inactive + " channelOpen="
            + (ch != null && ch.isOpen()) + " channelActive=" + (ch != null && ch.isActive()) + " queuedBytes=" + queuedBytes();
    }

    // ------------------------------------------------------------------ outbound

    /** @return bytes queued but not yet handed to the socket layer */
    long queuedBytes() {
        return outbound.queuedBytes();
    }

    /**
     * Queues a control message (any thread); takes ownership of {@code message}.
     *
     * @param message a whole wire message (length prefix included)
     */
    void send(final ByteBuf message) {
        outbound.send(message);
    }

    @Override
    public void channelWritabilityChanged(final ChannelHandlerContext context) {
        if (channel.isWritable()) {
            outbound.drain(false);
        }
        context.fireChannelWritabilityChanged();
    }

    // ------------------------------------------------------------------ inbound

    @Override
    public void channelRead(final ChannelHandlerContext context, final Object msg) {
        if (!(msg instanceof ByteBuf bytes)) {
            io.netty.util.ReferenceCountUtil.release(msg);
            return;
        }
        try {
            if (cumulation == null) {
                return; // closed
            }
            if (cumulation.readerIndex() > 0) {
                cumulation.discardSomeReadBytes();
            }
            cumulation.writeBytes(bytes);
        } finally {
            bytes.release();
        }
        if (!stopped) {
            process();
        }
    }

    @Override
    public void channelReadComplete(final ChannelHandlerContext context) {
        if (!stopped && !inactive) {
            context.read();
        }
    }

    /** Handles every whole message in the cumulation buffer, unless a sink pushes back. */
    private void process() {
        final ByteBuf in = cumulation;
        while (!stopped && in != null && !inactive) {
            final int readable = in.readableBytes();
            if (readable < TcpProtocol.LENGTH_FIELD) {
                break;
            }
            final int start = in.readerIndex();
            final int length = in.getIntLE(start);
            if (!helloSeen && (length < 1 || length > TcpProtocol.MAX_CONTROL_LENGTH)) {
                if (looksLikeTls(in, start)) {
                    refuse("it speaks TLS and this node does not: set " + TcpTlsConfig.TLS + " the same on every node");
                } else {
                    protocolError("length prefix " + Integer.toUnsignedString(length) + " of the first message is outside 1.."
                        + TcpProtocol.MAX_CONTROL_LENGTH + " (not an rdma-bus TCP peer)");
                }
                return;
            }
            if (length < 1 || length > maxMessageLength) {
                protocolError("length prefix " + Integer.toUnsignedString(length) + " is outside 1.." + maxMessageLength);
                return;
            }
            if (readable < TcpProtocol.LENGTH_FIELD + length) {
                break;
            }
            final int type = in.getUnsignedByte(start + TcpProtocol.LENGTH_FIELD);
            final int body = start + TcpProtocol.LENGTH_FIELD + 1;
            final int end = start + TcpProtocol.LENGTH_FIELD + length;
            if (!helloSeen) {
                if (type != TcpProtocol.TYPE_HELLO) {
                    protocolError("expected a hello, got message type " + type);
                    return;
                }
                if (!onHello(in, body, end)) {
                    return;
                }
            } else if (!handshaken) {
                if (!onAuth(type, in, body, end)) {
                    return;
                }
            } else {
                switch (type) {
                    case TcpProtocol.TYPE_DATA -> {
                        if (end - body < 4 || end - body - 4 > maxFrameBytes) {
                            protocolError("data message of " + length + " bytes does not fit a frame of at most " + maxFrameBytes);
                            return;
                        }
                        if (!deliver(in.getIntLE(body), body + 4, end - body - 4, TcpProtocol.LENGTH_FIELD + length)) {
                            return;
                        }
                        countOnLoop(TcpConnectionCounter.MESSAGES_IN, 1);
                        countOnLoop(TcpConnectionCounter.BYTES_IN, end - body - 4);
                    }
                    case TcpProtocol.TYPE_SUBSCRIBE -> {
                        if (!onSubscribe(in, body, end)) {
                            return;
                        }
                    }
                    case TcpProtocol.TYPE_UNSUBSCRIBE -> {
                        if (end - body < 4) {
                            protocolError("truncated unsubscribe");
                            return;
                        }
                        final int topicId = in.getIntLE(body);
                        final RemoteSubscriber gone = remoteTopics.remove(topicId);
                        if (gone != null) {
                            transport.removeRemoteSubscriber(topicId, gone);
                        }
                    }
                    case TcpProtocol.TYPE_CREDIT -> {
                        if (!onCredit(in, body, end)) {
                            return;
                        }
                    }
                    default -> {
                        protocolError("unknown message type " + type);
                        return;
                    }
                }
            }
            in.readerIndex(end);
        }
        if (in != null && !in.isReadable()) {
            in.clear();
        }
    }

    /** SUBSCRIBE from the peer: it subscribes to one of this node's topics (publishing side). */
    private boolean onSubscribe(final ByteBuf in, final int body, final int end) {
        if (end - body < TcpProtocol.SUBSCRIBE_FIXED) {
            protocolError("truncated subscribe");
            return false;
        }
        final int topicId = in.getIntLE(body);
        final boolean reliable = in.getUnsignedByte(body + 4) == 1;
        final long window = in.getIntLE(body + 5) & 0xFFFF_FFFFL;
        if (reliable && window < TcpProtocol.DATA_HEADER + maxFrameBytes) {
            protocolError("subscribe to topic " + topicId + " grants a window of " + window + " bytes, less than one frame ("
                + (TcpProtocol.DATA_HEADER + maxFrameBytes) + ")");
            return false;
        }
        if (!remoteTopics.containsKey(topicId)) {
            final RemoteSubscriber subscriber = new RemoteSubscriber(this, reliable, window);
            remoteTopics.put(topicId, subscriber);
            LOG.debug("tcp {}: {} subscribes to {}", transport.busName(), describe(),
                TcpProtocol.readName(in, body + TcpProtocol.SUBSCRIBE_FIXED, end));
            transport.addRemoteSubscriber(topicId, subscriber);
        }
        return true;
    }

    /** CREDIT from the peer: its subscriptions took more of a reliable topic this node publishes. */
    private boolean onCredit(final ByteBuf in, final int body, final int end) {
        if (end - body != 8) {
            protocolError("credit message of " + (end - body) + " bytes, not 8");
            return false;
        }
        final int bytes = in.getIntLE(body + 4);
        if (bytes <= 0) {
            protocolError("credit of " + bytes + " bytes");
            return false;
        }
        final RemoteSubscriber subscriber = remoteTopics.get(in.getIntLE(body));
        if (subscriber != null && subscriber.reliable) {
            subscriber.grant(bytes);
        } // else: the peer unsubscribed meanwhile, or subscribed the topic best effort: nothing to grant
        return true;
    }

    /** @return false if the connection was closed: the peer sent past its credit */
    private boolean deliver(final int topicId, final int frameOffset, final int frameLength, final int wireLength) {
        final String violation = inboundTopics.deliver(topicId, cumulation, frameOffset, frameLength, wireLength);
        if (violation != null) {
            protocolError(violation);
            return false;
        }
        return true;
    }

    private boolean onHello(final ByteBuf in, final int body, final int end) {
        if (end - body < 6 || in.getIntLE(body) != TcpProtocol.MAGIC) {
            protocolError("not an rdma-bus TCP peer (bad hello magic)");
            return false;
        }
        final int version = in.getUnsignedShortLE(body + 4);
        if (version != TcpProtocol.VERSION) {
            reject("peer " + describe() + " speaks rdma-bus TCP protocol version " + version + ", this node speaks version "
                + TcpProtocol.VERSION + ": closing the connection (run the same rdma-bus version on every node)");
            return false;
        }
        if (end - body < TcpProtocol.HELLO_FIXED + 2) {
            protocolError("truncated hello");
            return false;
        }
        remoteNodeId = in.getLongLE(body + 6);
        final int remoteMaxFrame = in.getIntLE(body + 14);
        final boolean peerHasSecret = (in.getUnsignedByte(body + 18) & TcpProtocol.FLAG_SECRET) != 0;
        final byte[] remoteNonce = new byte[TcpProtocol.NONCE_BYTES];
        in.getBytes(body + 19, remoteNonce);
        final String name = TcpProtocol.readName(in, body + TcpProtocol.HELLO_FIXED, end);
        remoteBusName = name == null ? "?" : name;
        if (remoteMaxFrame != maxFrameBytes) {
            reject("peer " + describe() + " uses " + TcpTransportConfig.MAX_FRAME_BYTES + "=" + remoteMaxFrame + ", this node "
                + maxFrameBytes + ": closing the connection (configure the same value on every node)");
            return false;
        }
        final BusSecret secret = transport.config().secret();
        if (secret.enabled() != peerHasSecret) {
            refuse((peerHasSecret ? "it has a bus secret and this node has none" : "it has no bus secret and this node requires one")
                + ": set the same " + TcpTransportConfig.SECRET_FILE + " (or " + TcpTransportConfig.SECRET + ") on every node");
            return false;
        }
        helloSeen = true;
        if (secret.enabled()) {
            final boolean dialled = seed != null;
            final long self = transport.nodeId();
            send(TcpProtocol.auth(ctx.alloc(), TcpProtocol.proof(secret, dialled ? TcpProtocol.ROLE_CONNECTOR : TcpProtocol.ROLE_ACCEPTOR, self,
                remoteNodeId, remoteNonce, localNonce)));
            expectedProof = TcpProtocol.proof(secret, dialled ? TcpProtocol.ROLE_ACCEPTOR : TcpProtocol.ROLE_CONNECTOR, remoteNodeId, self,
                localNonce, remoteNonce);
            return true; // nothing but its AUTH is accepted next
        }
        return completeHandshake();
    }

    /** With a bus secret, the message after the peer's HELLO: its AUTH proof, or the peer is refused. */
    private boolean onAuth(final int type, final ByteBuf in, final int body, final int end) {
        if (type != TcpProtocol.TYPE_AUTH) {
            refuse("no AUTH before its first message (type " + type + ")");
            return false;
        }
        if (end - body != TcpProtocol.PROOF_BYTES) {
            refuse("AUTH of " + (end - body) + " bytes, not " + TcpProtocol.PROOF_BYTES);
            return false;
        }
        final byte[] proof = new byte[TcpProtocol.PROOF_BYTES];
        in.getBytes(body, proof);
        if (!BusSecret.matches(expectedProof, proof)) {
            refuse("wrong bus secret (its AUTH proof does not match): set the same " + TcpTransportConfig.SECRET_FILE + " on every node");
            return false;
        }
        expectedProof = null;
        return completeHandshake();
    }

    private boolean completeHandshake() {
        handshaken = true;
        if (handshakeTimeout != null) {
            handshakeTimeout.cancel(false);
        }
        if (!transport.onHandshake(this)) {
            ctx.close();
            return false;
        }
        return true;
    }

    /**
     * @return true if the stream starts like a TLS record (content type 20..23: a ClientHello of a dialling TLS node, an
     *         alert of an accepting one; version 3.x); read as a length prefix that is far above any first message's
     */
    private static boolean looksLikeTls(final ByteBuf in, final int start) {
        final int type = in.getUnsignedByte(start);
        return type >= 20 && type <= 23 && in.getUnsignedByte(start + 1) == 3 && in.getUnsignedByte(start + 2) <= 4;
    }

    private void reject(final String why) {
        rejected = true;
        transport.onHandshakeRejected(why);
        ctx.close();
        inactiveNow();
    }

    /** The peer did not authenticate (bus secret or TLS): counted in refusedPeers, logged rate-limited, closed. */
    private void refuse(final String why) {
        transport.onPeerRefused(describe(), why);
        ctx.close();
        inactiveNow();
    }

    private void protocolError(final String why) {
        transport.onProtocolError(describe(), why);
        ctx.close();
        inactiveNow();
    }

    /** Stops processing at once; channelInactive follows and cleans up. */
    private void inactiveNow() {
        stopped = true;
    }

    boolean isHandshaken() {
        return handshaken;
    }

    // ------------------------------------------------------------------ counters

    /** Adds to a counter whose only writer is the event loop (a plain read and a release write). */
    private void countOnLoop(final TcpConnectionCounter counter, final long delta) {
        counters.setRelease(counter.id(), counters.getPlain(counter.id()) + delta);
    }

    /** DATA messages handed to the socket (the event loop). */
    private void countOut(final int messages, final long frameBytes) {
        countOnLoop(TcpConnectionCounter.MESSAGES_OUT, messages);
        countOnLoop(TcpConnectionCounter.BYTES_OUT, frameBytes);
    }

    /** A best-effort frame was not queued to this peer (a publisher thread; atomic: several may drop at once). */
    void onDrop() {
        counters.incrementAndGet(TcpConnectionCounter.DROPS.id());
    }

    /** @param earlier connections to this peer node before this one (at the handshake, under the transport's lock) */
    void reconnects(final long earlier) {
        counters.setRelease(TcpConnectionCounter.RECONNECTS.id(), earlier);
    }

    /** @return this connection's counters, by {@link TcpConnectionCounter} name in its order (any thread: a racy snapshot) */
    io.rdmabus.ConnectionStats stats() {
        final java.util.Map<String, Long> values = new java.util.LinkedHashMap<>();
        for (final TcpConnectionCounter counter : TcpConnectionCounter.values()) {
            values.put(counter.counterName(), counter == TcpConnectionCounter.QUEUED_BYTES ? queuedBytes() : counters.getAcquire(counter.id()));
        }
        final Channel ch = channel;
        return new io.rdmabus.ConnectionStats(connectionId, (ch == null ? "?" : String.valueOf(ch.remoteAddress())) + " (" + remoteBusName + ")",
            java.util.Collections.unmodifiableMap(values));
    }
}
