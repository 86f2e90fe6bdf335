package io.rdmabus.transport.tcp;

import java.nio.channels.spi.SelectorProvider;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.FastThreadLocalThread;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.NonBlocking;
import reactor.netty.resources.LoopResources;

/**
 * The transport's own event loops: one small NIO group that serves the listening socket, accepted connections and
 * outgoing connections alike (reactor-netty's default resources would start separate server, selector and client
 * groups, and global ones live until the JVM exits). Threads are named {@code rdma-bus-tcp-io-<busName>-<n>} so a
 * test can check that none survive {@link #disposeLater}. They carry Reactor's {@link NonBlocking} marker, as the bus's
 * agent threads do: a {@code SHARED} bus emits a copying subscriber's message directly on the event loop that received
 * it, and a subscriber that calls {@code block()} there fails at once instead of stalling the connection.
 */
final class TcpLoopResources implements LoopResources {
    private final EventLoopGroup group;

    /**
     * @param busName the bus, for thread names
     * @param threads event loop threads
     * @param spinNs  how long a loop polls after its last work before it blocks in select ({@link SpinThenSelectStrategy}); 0: never
     */
    TcpLoopResources(final String busName, final int threads, final long spinNs) {
        final String prefix = "rdma-bus-tcp-io-" + busName + "-";
        final AtomicInteger counter = new AtomicInteger();
        this.group = new MultiThreadIoEventLoopGroup(threads, runnable -> {
            final Thread thread = new EventLoopThread(runnable, prefix + counter.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        }, spinNs > 0
            ? NioIoHandler.newFactory(SelectorProvider.provider(), () -> new SpinThenSelectStrategy(spinNs))
            : NioIoHandler.newFactory());
    }

    /** @return the one group, for scheduling retries */
    EventLoopGroup group() {
        return group;
    }

    @Override
    public EventLoopGroup onServer(final boolean useNative) {
        return group;
    }

    @Override
    public EventLoopGroup onClient(final boolean useNative) {
        return group;
    }

    @Override
    public EventLoopGroup onServerSelect(final boolean useNative) {
        return group;
    }

    @Override
    public boolean daemon() {
        return true;
    }

    @Override
    public boolean isDisposed() {
        return group.isTerminated();
    }

    @Override
    public Mono<Void> disposeLater(final Duration quietPeriod, final Duration timeout) {
        return Mono.defer(() -> {
            group.shutdownGracefully(quietPeriod.toMillis(), timeout.toMillis(), TimeUnit.MILLISECONDS);
            return Mono.fromFuture(() -> toFuture(group.terminationFuture()));
        });
    }

    private static java.util.concurrent.CompletableFuture<Void> toFuture(final io.netty.util.concurrent.Future<?> future) {
        final java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        future.addListener(f -> done.complete(null));
        return done;
    }

    /** An event loop's thread: Reactor's blocking operators refuse to run on it. */
    private static final class EventLoopThread extends FastThreadLocalThread implements NonBlocking {
        EventLoopThread(final Runnable runnable, final String name) {
            super(runnable, name);
        }
    }
}
