package io.rdmabus.benchmarks;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.IdleStrategy;

import reactor.core.publisher.Flux;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpClient;
import reactor.netty.tcp.TcpServer;

/**
 * Plain reactor-netty TCP on loopback, no bus: 4-byte length-prefixed frames, {@code send(Publisher)} for one-way
 * streams (writability back-pressure, flushed per batch, one pooled buffer per frame), a server that counts or echoes.
 * The servers run on one event-loop thread and the clients on another, as the bus's two buses each have one (the TCP
 * transport's default): two endpoints, each on its own thread, as two processes would be. (With both ends on one
 * thread, a frame written by the client is read by the server in the same loop, with no thread to wake: no two-party
 * deployment has that.) With {@code copies} the receiving code copies each frame into a new {@code byte[]} (and the
 * echo sends that copy back in a new pooled buffer), as the bus's copying {@code Flux} hands a {@code byte[]} over;
 * without, it reads the frame in place (and echoes the received buffer itself).
 */
final class RawTcpLoad implements Load {
    private static final int MAX_FRAME = 16 * 1024 * 1024;
    private final LoopResources serverLoops = LoopResources.create("raw-tcp-server", 1, true);
    private final LoopResources clientLoops = LoopResources.create("raw-tcp-client", 1, true);
    /** The count server's receipts, reset by each one-way run. */
    private final Arrivals received = new Arrivals(Long.MAX_VALUE);
    private final DisposableServer countServer;
    private final DisposableServer echoServer;
    private final boolean copies;
    /** Each frame carries {@link System#nanoTime()}: a one-way run's in its first 8 payload bytes, a ping's in the 8 after its sequence. */
    private final boolean stamps;
    /** The last copy a receiving thread made: kept (a plain store, racy on purpose) so the JIT cannot drop the copy. */
    @SuppressWarnings("unused")
    private byte[] lastCopy;

    /**
     * @param copies the receiving code copies each frame into a new {@code byte[]}
     * @param stamps each frame carries {@link System#nanoTime()}: a one-way run's in its first 8 payload bytes, a ping's in the 8 after its sequence
     */
    RawTcpLoad(final boolean copies, final boolean stamps) {
        this.copies = copies;
        this.stamps = stamps;
        countServer = TcpServer.create().host("127.0.0.1").port(0).runOn(serverLoops)
            .doOnConnection(c -> c.addHandlerLast(new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4, 0, 4)))
            .handle((in, out) -> in.receive().doOnNext(b -> {
                if (copies) {
                    copyOut(b);
                }
                received.onMessage();
            }).then())
            .bindNow();
        echoServer = TcpServer.create().host("127.0.0.1").port(0).runOn(serverLoops)
            .doOnConnection(c -> c.addHandlerLast(new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4, 0, 4)).addHandlerLast(new LengthFieldPrepender(4)))
            .handle((in, out) -> out.send(copies
                ? in.receive().map(b -> {
                    final byte[] copy = copyOut(b);
                    return out.alloc().buffer(copy.length).writeBytes(copy);
                })
                : in.receive().retain()))
            .bindNow();
    }

    private byte[] copyOut(final ByteBuf frame) {
        final byte[] copy = new byte[frame.readableBytes()];
        frame.getBytes(frame.readerIndex(), copy);
        lastCopy = copy;
        return copy;
    }

    @Override
    public String label() {
        return "raw/reactor-netty-tcp" + (copies ? " copy" : "") + (stamps ? " stamped" : "");
    }

    private Connection connect(final int port, final boolean framing) {
        TcpClient client = TcpClient.create().host("127.0.0.1").port(port).runOn(clientLoops);
        if (framing) {
            client = client.doOnConnected(c -> c.addHandlerLast(new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4, 0, 4))
                .addHandlerLast(new LengthFieldPrepender(4)));
        }
        return client.connectNow(Duration.ofSeconds(10));
    }

    @Override
    public long oneWay(final int messages, final int sizeBytes) {
        received.reset(messages + 1L); // the priming message, then the timed ones
        final Connection connection = connect(countServer.port(), false);
        try {
            final byte[] payload = new byte[sizeBytes];
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            Load.prime(label(), deadlineNs, () -> {
                connection.outbound().sendObject(connection.channel().alloc().buffer(4 + sizeBytes).writeInt(sizeBytes).writeBytes(payload))
                    .then().block(Duration.ofNanos(TIMEOUT_NS));
                return true;
            }, received, () -> 0);
            final long startNs = System.nanoTime();
            // one pooled buffer per frame, length prefix and payload together (what a careful hand-written sender does)
            connection.outbound().send(Flux.range(0, messages).map(i -> {
                final ByteBuf frame = connection.channel().alloc().buffer(4 + sizeBytes).writeInt(sizeBytes).writeBytes(payload);
                return stamps ? frame.setLong(4, System.nanoTime()) : frame;
            })).then().block(Duration.ofNanos(TIMEOUT_NS));
            while (received.count() <= messages) {
                Load.checkDeadline(deadlineNs, "raw tcp delivery");
                Thread.yield();
            }
            return received.lastNs() - startNs;
        } finally {
            connection.disposeNow(Duration.ofSeconds(5));
        }
    }

    @Override
    public Histogram pingPong(final int pings, final int sizeBytes) {
        final Connection connection = connect(echoServer.port(), true);
        final AtomicLong lastSeq = new AtomicLong(-1);
        connection.inbound().receive().subscribe(copies
            ? b -> lastSeq.lazySet(Load.getLong(copyOut(b), 0))
            : b -> lastSeq.lazySet(b.getLongLE(b.readerIndex())));
        try {
            final int size = Math.max(8, sizeBytes);
            final Histogram rtt = new Histogram(3);
            final IdleStrategy idle = Load.idle();
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            final int warmup = pings / 10;
            for (int i = 0; i < warmup + pings; i++) {
                final ByteBuf ping = connection.channel().alloc().buffer(size);
                ping.writeLongLE(i).writeZero(size - 8);
                if (stamps) {
                    ping.setLong(Long.BYTES, System.nanoTime());
                }
                final long startNs = System.nanoTime();
                connection.channel().writeAndFlush(ping);
                idle.reset();
                while (lastSeq.get() != i) {
                    if (Load.pastDeadline(deadlineNs)) {
                        throw Load.timedOut("raw tcp pong " + i);
                    }
                    idle.idle();
                }
                if (i >= warmup) {
                    rtt.recordValue(System.nanoTime() - startNs);
                }
            }
            return rtt;
        } finally {
            connection.disposeNow(Duration.ofSeconds(5));
        }
    }

    @Override
    public void close() {
        countServer.disposeNow(Duration.ofSeconds(5));
        echoServer.disposeNow(Duration.ofSeconds(5));
        serverLoops.disposeLater().block(Duration.ofSeconds(10));
        clientLoops.disposeLater().block(Duration.ofSeconds(10));
    }
}
