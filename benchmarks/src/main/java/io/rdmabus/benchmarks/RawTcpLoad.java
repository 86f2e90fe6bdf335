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
 * Plain reactor-netty TCP on loopback, no bus: 4-byte length-prefixed frames, one event-loop thread (the bus's TCP
 * transport default), {@code send(Publisher)} for one-way streams (writability back-pressure, flushed per batch, one
 * pooled buffer per frame), a server that counts or echoes.
 */
final class RawTcpLoad implements Load {
    private static final int MAX_FRAME = 16 * 1024 * 1024;
    private final LoopResources loops = LoopResources.create("raw-tcp", 1, true);
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong lastNs = new AtomicLong();
    private final DisposableServer countServer;
    private final DisposableServer echoServer;

    RawTcpLoad() {
        countServer = TcpServer.create().host("127.0.0.1").port(0).runOn(loops)
            .doOnConnection(c -> c.addHandlerLast(new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4, 0, 4)))
            .handle((in, out) -> in.receive().doOnNext(b -> {
                lastNs.lazySet(System.nanoTime());
                received.lazySet(received.get() + 1);
            }).then())
            .bindNow();
        echoServer = TcpServer.create().host("127.0.0.1").port(0).runOn(loops)
            .doOnConnection(c -> c.addHandlerLast(new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4, 0, 4)).addHandlerLast(new LengthFieldPrepender(4)))
            .handle((in, out) -> out.send(in.receive().retain()))
            .bindNow();
    }

    @Override
    public String label() {
        return "raw/reactor-netty-tcp";
    }

    private Connection connect(final int port, final boolean framing) {
        TcpClient client = TcpClient.create().host("127.0.0.1").port(port).runOn(loops);
        if (framing) {
            client = client.doOnConnected(c -> c.addHandlerLast(new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4, 0, 4))
                .addHandlerLast(new LengthFieldPrepender(4)));
        }
        return client.connectNow(Duration.ofSeconds(10));
    }

    @Override
    public long oneWay(final int messages, final int sizeBytes) {
        received.set(0);
        final Connection connection = connect(countServer.port(), false);
        try {
            final byte[] payload = new byte[sizeBytes];
            final long startNs = System.nanoTime();
            // one pooled buffer per frame, length prefix and payload together (what a careful hand-written sender does)
            connection.outbound().send(Flux.range(0, messages).map(i -> connection.channel().alloc().buffer(4 + sizeBytes).writeInt(sizeBytes)
                .writeBytes(payload))).then().block(Duration.ofNanos(TIMEOUT_NS));
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            while (received.get() < messages) {
                Load.checkDeadline(deadlineNs, "raw tcp delivery");
                Thread.yield();
            }
            return lastNs.get() - startNs;
        } finally {
            connection.disposeNow(Duration.ofSeconds(5));
        }
    }

    @Override
    public Histogram pingPong(final int pings, final int sizeBytes) {
        final Connection connection = connect(echoServer.port(), true);
        final AtomicLong lastSeq = new AtomicLong(-1);
        connection.inbound().receive().subscribe(b -> lastSeq.lazySet(b.getLongLE(b.readerIndex())));
        try {
            final int size = Math.max(8, sizeBytes);
            final Histogram rtt = new Histogram(3);
            final IdleStrategy idle = Load.idle();
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            final int warmup = pings / 10;
            for (int i = 0; i < warmup + pings; i++) {
                final ByteBuf ping = connection.channel().alloc().buffer(size);
                ping.writeLongLE(i).writeZero(size - 8);
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
        loops.disposeLater().block(Duration.ofSeconds(10));
    }
}
