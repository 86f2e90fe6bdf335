package io.rdmabus.tck.remote;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;
import io.rdmabus.tck.TransportTck;

import org.reactivestreams.Subscription;

import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * The far side of a split TCK run: a process that owns real buses (made by a {@link BusNode.Factory}) and serves them
 * to one {@link RemoteBusClient} over plain TCP (protocol in {@code Wire}). Transport-agnostic.
 *
 * <p>One session: the first control connection. It ends when the client sends SHUTDOWN (clean), when the control
 * connection breaks or stays silent longer than the idle bound (the client pings), or at {@link #close()}; then every
 * bus is closed and {@link #awaitEnd} returns. A closed bus is kept (closed) so that calls on it reach the real closed
 * bus, as they would locally.
 */
public final class BusHost implements AutoCloseable {
    /** How long the control connection may stay silent before the host gives the client up (it pings every few seconds). */
    static final Duration CONTROL_IDLE = Duration.ofSeconds(120);
    private static final Duration THREADS_GONE = Duration.ofSeconds(10);

    private final ServerSocket server;
    private final BusNode.Factory factory;
    private final RemoteCodecs codecs;
    private final Map<Integer, Bus> buses = new ConcurrentHashMap<>();
    private final Map<Bus, String> busNames = new ConcurrentHashMap<>();
    private final AtomicInteger nextBusId = new AtomicInteger();
    private final AtomicBoolean controlTaken = new AtomicBoolean();
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();
    private final CountDownLatch connected = new CountDownLatch(1);
    private final CountDownLatch ended = new CountDownLatch(1);
    private volatile boolean shutdownRequested;
    private volatile String endReason = "not ended";

    private BusHost(final ServerSocket server, final BusNode.Factory factory, final RemoteCodecs codecs) {
        this.server = server;
        this.factory = factory;
        this.codecs = codecs;
    }

    /**
     * Listens and serves in the background.
     *
     * @param bind    address to listen on (port 0: any free port)
     * @param factory makes the host's buses
     * @param codecs  the codecs topics may use (the client must use the same registry)
     * @return the running host
     * @throws IOException if it cannot listen
     */
    public static BusHost start(final InetSocketAddress bind, final BusNode.Factory factory, final RemoteCodecs codecs) throws IOException {
        final ServerSocket server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(bind);
        final BusHost host = new BusHost(server, factory, codecs);
        Thread.ofPlatform().daemon().name("bus-host-accept").start(host::acceptLoop);
        return host;
    }

    /** @return the port it listens on */
    public int port() {
        return server.getLocalPort();
    }

    /**
     * How a session ended.
     *
     * @param connected         a client connected
     * @param shutdownRequested the client ended the session with SHUTDOWN (the clean end)
     * @param reason            why it ended
     * @param busesCreated      buses created for the client
     * @param errors            unexpected failures inside the host (each also printed)
     */
    public record Outcome(boolean connected, boolean shutdownRequested, String reason, int busesCreated, List<Throwable> errors) {
        /** @return true if a client connected, ended with SHUTDOWN, and nothing went wrong inside the host */
        public boolean clean() {
            return connected && shutdownRequested && errors.isEmpty();
        }
    }

    /**
     * Waits for a client and for the end of its session, then closes the host.
     *
     * @param connectWithin how long to wait for the client's control connection
     * @param sessionWithin how long the whole session may last after it connected
     * @return the outcome
     * @throws InterruptedException if interrupted
     */
    public Outcome awaitEnd(final Duration connectWithin, final Duration sessionWithin) throws InterruptedException {
        return awaitEnd(connectWithin, sessionWithin, () -> null);
    }

    /**
     * Like {@link #awaitEnd(Duration, Duration)}, and also ends the session as soon as {@code clientGone} returns a reason
     * (checked every 500 ms), e.g. the client's process said through a shared file that it gave up before connecting.
     *
     * @param connectWithin how long to wait for the client's control connection
     * @param sessionWithin how long the whole session may last after it connected
     * @param clientGone    null while the client may still come or run, else why it will not
     * @return the outcome
     * @throws InterruptedException if interrupted
     */
    public Outcome awaitEnd(final Duration connectWithin, final Duration sessionWithin, final Supplier<String> clientGone)
        throws InterruptedException {
        final long connectDeadlineNs = System.nanoTime() + connectWithin.toNanos();
        while (!connected.await(500, TimeUnit.MILLISECONDS) && ended.getCount() > 0) {
            final String gone = clientGone.get();
            if (gone != null) {
                endSession("the client gave up before connecting: " + gone);
            } else if (System.nanoTime() > connectDeadlineNs) {
                endSession("no client connected within " + connectWithin);
            }
        }
        final long sessionDeadlineNs = System.nanoTime() + sessionWithin.toNanos();
        while (!ended.await(500, TimeUnit.MILLISECONDS)) {
            final String gone = clientGone.get();
            if (gone != null) {
                endSession("the client is gone: " + gone);
            } else if (System.nanoTime() > sessionDeadlineNs) {
                endSession("session still running after " + sessionWithin);
            }
        }
        close();
        return new Outcome(connected.getCount() == 0, shutdownRequested, endReason, nextBusId.get(), List.copyOf(errors));
    }

    @Override
    public void close() {
        endSession("host closed");
        try {
            server.close();
        } catch (final IOException ignored) {
            // closing anyway
        }
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                final Socket socket = server.accept();
                socket.setTcpNoDelay(true);
                sockets.add(socket);
                // platform threads: on a one-vCPU guest the virtual-thread scheduler has one carrier, and a handler inside
                // the bus (an offer waiting for credits) must not hold up the others, the control connection included
                Thread.ofPlatform().daemon().name("bus-host-conn").start(() -> serve(socket));
            } catch (final IOException ex) {
                if (!server.isClosed()) {
                    error("accept", ex);
                }
            }
        }
    }

    private void error(final String where, final Throwable ex) {
        System.err.println("bus host: unexpected failure in " + where + ": " + ex);
        ex.printStackTrace();
        errors.add(ex);
    }

    private void serve(final Socket socket) {
        try (socket) {
            final DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
            final DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), 1 << 16));
            if (in.readInt() != Wire.MAGIC) {
                throw new IOException("not a bus-host client");
            }
            final byte kind = in.readByte();
            switch (kind) {
                case Wire.KIND_CONTROL -> serveControl(socket, in, out);
                case Wire.KIND_SUBSCRIBE -> serveSubscribe(in, out);
                case Wire.KIND_PUBLISH -> servePublish(in, out);
                case Wire.KIND_PUBLICATION -> servePublication(in, out);
                default -> throw new IOException("unknown connection kind " + kind);
            }
        } catch (final EOFException | SocketException ex) {
            // the client went away (it closes data connections when they are done); the control handler says more
        } catch (final IOException | RuntimeException ex) {
            if (ended.getCount() > 0) {
                error("connection handler", ex);
            }
        } finally {
            sockets.remove(socket);
        }
    }

    private Bus bus(final int id) {
        final Bus bus = buses.get(id);
        if (bus == null) {
            throw new IllegalArgumentException("no bus " + id + " on this host");
        }
        return bus;
    }

    // ------------------------------------------------------------------------------------------------ control

    private void serveControl(final Socket socket, final DataInputStream in, final DataOutputStream out) throws IOException {
        if (!controlTaken.compareAndSet(false, true)) {
            throw new IOException("a second control connection: this host serves one client session");
        }
        connected.countDown();
        System.err.println("bus host: client " + socket.getRemoteSocketAddress() + " connected");
        socket.setSoTimeout((int) CONTROL_IDLE.toMillis());
        try {
            while (true) {
                final byte op;
                try {
                    op = in.readByte();
                } catch (final SocketTimeoutException ex) {
                    endSession("the client was silent for " + CONTROL_IDLE + " (no ping)");
                    return;
                }
                try {
                    switch (op) {
                        case Wire.OP_NEW_BUS -> newBus(in, out);
                        case Wire.OP_CLOSE_BUS -> {
                            closeBus(bus(in.readInt()));
                            out.writeByte(Wire.RESP_OK);
                        }
                        case Wire.OP_STATS -> {
                            final Bus bus = bus(in.readInt());
                            out.writeByte(Wire.RESP_OK);
                            Wire.writeStats(out, bus.stats());
                        }
                        case Wire.OP_PING -> out.writeByte(Wire.RESP_OK);
                        case Wire.OP_SHUTDOWN -> {
                            shutdownRequested = true;
                            final String left = closeAll();
                            if (left.isEmpty()) {
                                out.writeByte(Wire.RESP_OK);
                            } else {
                                errors.add(new AssertionError(left));
                                out.writeByte(Wire.RESP_ERROR);
                                Wire.writeError(out, new IllegalStateException(left));
                            }
                            out.flush();
                            endSession("the client shut the session down");
                            return;
                        }
                        default -> throw new IOException("unknown control op " + op);
                    }
                } catch (final RuntimeException | AssertionError ex) {
                    out.writeByte(Wire.RESP_ERROR);
                    Wire.writeError(out, ex);
                }
                out.flush();
            }
        } catch (final EOFException | SocketException ex) {
            endSession("the control connection broke: " + ex);
        }
    }

    private void newBus(final DataInputStream in, final DataOutputStream out) throws IOException {
        final String name = in.readUTF();
        final int n = in.readInt();
        final List<String> seeds = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            seeds.add(in.readUTF());
        }
        final long t0 = System.nanoTime();
        final BusNode node = factory.newBus(name, List.copyOf(seeds));
        final int id = nextBusId.incrementAndGet();
        buses.put(id, node.bus());
        busNames.put(node.bus(), name);
        System.err.println("bus host: bus " + name + " (#" + id + ") on " + node.endpoint() + ", seeds " + seeds + ", started in "
            + (System.nanoTime() - t0) / 1_000_000 + " ms");
        out.writeByte(Wire.RESP_OK);
        out.writeInt(id);
        out.writeUTF(node.endpoint());
        out.writeUTF(node.bus().transportName());
    }

    /**
     * Closes the bus and, as the TCK does for local buses, checks that every thread named after it is gone: the test JVM
     * cannot see this process's threads, so the host checks and fails the close instead.
     */
    private void closeBus(final Bus bus) {
        // the bus name is in its threads' names; Bus does not expose it, so the host remembers it per bus
        final String name = busNames.get(bus);
        bus.close();
        if (name == null) {
            return;
        }
        final long deadlineNs = System.nanoTime() + THREADS_GONE.toNanos();
        List<String> left = threadsOf(name);
        while (!left.isEmpty() && System.nanoTime() < deadlineNs) {
            try {
                Thread.sleep(20);
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
                break;
            }
            left = threadsOf(name);
        }
        if (!left.isEmpty()) {
            throw new AssertionError("threads of the closed remote bus " + name + " still alive after " + THREADS_GONE + ": " + left);
        }
    }

    private static List<String> threadsOf(final String busName) {
        final List<String> names = new ArrayList<>();
        for (final Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith(TransportTck.THREAD_PREFIX) && t.getName().contains(busName)) {
                names.add(t.getName());
            }
        }
        return names;
    }

    private String closeAll() {
        final StringBuilder left = new StringBuilder();
        for (final Bus bus : buses.values()) {
            try {
                closeBus(bus);
            } catch (final RuntimeException | AssertionError ex) {
                left.append(ex.getMessage()).append("; ");
            }
        }
        return left.toString();
    }

    private void endSession(final String reason) {
        if (ended.getCount() == 0) {
            return;
        }
        synchronized (this) {
            if (ended.getCount() == 0) {
                return;
            }
            endReason = reason;
            System.err.println("bus host: session ends: " + reason);
            closeAll();
            for (final Socket s : sockets) {
                try {
                    s.close();
                } catch (final IOException ignored) {
                    // closing anyway
                }
            }
            ended.countDown();
        }
    }

    // ------------------------------------------------------------------------------------------------ subscribe

    /**
     * A subscriber that requests from the bus exactly what the client requested, and forwards every signal. Signals go
     * through a bounded queue to one writer thread per subscription, which writes everything queued and then flushes
     * once: a burst of values leaves as a few large TCP segments instead of one segment (and one flush) per value, which
     * between two emulated guests cost more than the bus's own delivery. The queue is bounded, so a client that does
     * not read still holds the bus's delivery thread back (as the blocking socket write did); order is kept.
     */
    private static final class Forwarder extends BaseSubscriber<Received<Object>> {
        private static final int QUEUE = 1024;
        private static final Write END = o -> { };

        private final DataOutputStream out;
        private final Topic<Object> topic;
        private final BlockingQueue<Write> queue = new ArrayBlockingQueue<>(QUEUE);
        private final Thread writer;
        private volatile boolean writerDone;
        private long written; // the writer's own counts, read after it ended
        private long flushes;

        Forwarder(final DataOutputStream out, final Topic<Object> topic) {
            this.out = out;
            this.topic = topic;
            this.writer = Thread.ofPlatform().daemon().name("bus-host-sub-writer").start(this::writeLoop);
        }

        @Override
        protected void hookOnSubscribe(final Subscription subscription) {
            // nothing: demand comes only from the client
        }

        @Override
        protected void hookOnNext(final Received<Object> r) {
            final byte[] bytes = Wire.encode(topic.codec(), r.value());
            send(o -> {
                o.writeByte(Wire.MSG_NEXT);
                o.writeInt(r.sessionId());
                o.writeLong(r.sequence());
                o.writeLong(r.timestampNs());
                o.writeLong(r.lostBefore());
                Wire.writeBytes(o, bytes);
            });
        }

        @Override
        protected void hookOnError(final Throwable throwable) {
            send(o -> {
                o.writeByte(Wire.MSG_ERROR);
                Wire.writeError(o, throwable);
            });
        }

        @Override
        protected void hookOnComplete() {
            send(o -> o.writeByte(Wire.MSG_COMPLETE));
        }

        /** Queues a message for the writer; waits while the queue is full, gives up once the writer has ended. */
        void send(final Write write) {
            try {
                while (!writerDone) {
                    if (queue.offer(write, 100, TimeUnit.MILLISECONDS)) {
                        return;
                    }
                }
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }

        /** Writes whatever was queued, flushes once the queue is empty, until {@link #finish()}. */
        private void writeLoop() {
            boolean broken = false;
            try {
                while (true) {
                    Write next = queue.take();
                    while (next != null) {
                        if (next == END) {
                            if (!broken) {
                                out.flush();
                            }
                            return;
                        }
                        if (!broken) {
                            try {
                                next.to(out);
                                written++;
                            } catch (final IOException ex) {
                                // the client is gone: its connection handler ends; stop the bus feeding this subscriber
                                broken = true;
                                dispose();
                            }
                        }
                        next = queue.poll();
                    }
                    if (!broken) {
                        try {
                            out.flush();
                            flushes++;
                        } catch (final IOException ex) {
                            broken = true;
                            dispose();
                        }
                    }
                }
            } catch (final InterruptedException | IOException ex) {
                // ending anyway
            } finally {
                writerDone = true;
            }
        }

        /** Writes out everything queued before this call, then ends the writer (bounded wait). */
        void finish() throws InterruptedException {
            send(END);
            writer.join(TimeUnit.SECONDS.toMillis(10));
            if (!writer.isAlive() && written >= 1000) {
                System.err.println("bus host: subscription to " + topic.name() + ": " + written + " messages written in " + flushes + " flushes");
            }
        }
    }

    @FunctionalInterface
    private interface Write {
        void to(DataOutputStream out) throws IOException;
    }

    private void serveSubscribe(final DataInputStream in, final DataOutputStream out) throws IOException {
        final Bus bus = bus(in.readInt());
        final Topic<Object> topic = Wire.readTopic(in, codecs);
        final SubscribeOptions<Object> options = Wire.readOptions(in);
        final Forwarder forwarder = new Forwarder(out, topic);
        try {
            bus.subscribeReceived(topic, options).subscribe(forwarder);
        } catch (final RuntimeException ex) {
            forwarder.hookOnError(ex);
        }
        // the bus registered the subscription inside subscribe(): say so, so that the client's subscribe returns only now
        forwarder.send(o -> o.writeByte(Wire.MSG_SUBSCRIBED));
        try {
            while (true) {
                final byte msg = in.readByte();
                if (msg == Wire.MSG_REQUEST) {
                    forwarder.request(in.readLong());
                } else if (msg == Wire.MSG_CANCEL) {
                    forwarder.dispose();
                    // acknowledged after the bus dropped the subscription, so the client's dispose is synchronous too
                    forwarder.send(o -> o.writeByte(Wire.MSG_CANCEL));
                    return;
                } else {
                    throw new IOException("unknown subscribe message " + msg);
                }
            }
        } finally {
            forwarder.dispose();
            try {
                forwarder.finish(); // the cancel acknowledgement and anything queued before it go out before the socket closes
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ publish

    private void servePublish(final DataInputStream in, final DataOutputStream out) throws IOException {
        final Bus bus = bus(in.readInt());
        final Topic<Object> topic = Wire.readTopic(in, codecs);
        final FluxSink<?>[] holder = new FluxSink<?>[1];
        final Flux<Object> values = Flux.create(sink -> {
            holder[0] = sink;
            sink.onRequest(n -> send(out, o -> {
                o.writeByte(Wire.MSG_REQUEST);
                o.writeLong(n);
            }));
            sink.onCancel(() -> send(out, o -> o.writeByte(Wire.MSG_CANCEL)));
        }, FluxSink.OverflowStrategy.ERROR);
        final Disposable publishing = bus.publish(topic, values).subscribe(
            v -> { },
            error -> send(out, o -> {
                o.writeByte(Wire.MSG_ERROR);
                Wire.writeError(o, error);
            }),
            () -> send(out, o -> o.writeByte(Wire.MSG_DONE)));
        try {
            while (true) {
                final byte msg = in.readByte();
                @SuppressWarnings("unchecked")
                final FluxSink<Object> sink = (FluxSink<Object>) holder[0];
                switch (msg) {
                    case Wire.MSG_VALUE -> {
                        final Object value = Wire.decode(topic.codec(), Wire.readBytes(in));
                        if (sink != null) {
                            sink.next(value);
                        }
                    }
                    case Wire.MSG_COMPLETE -> {
                        if (sink != null) {
                            sink.complete();
                        }
                    }
                    case Wire.MSG_FAIL -> {
                        final Throwable error = Wire.readError(in);
                        if (sink != null) {
                            sink.error(error);
                        }
                    }
                    case Wire.MSG_CANCEL -> {
                        publishing.dispose();
                        return;
                    }
                    default -> throw new IOException("unknown publish message " + msg);
                }
            }
        } finally {
            publishing.dispose();
        }
    }

    private static void send(final DataOutputStream out, final Write write) {
        synchronized (out) {
            try {
                write.to(out);
                out.flush();
            } catch (final IOException ignored) {
                // the client is gone; the read loop ends and disposes
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ publication

    private void servePublication(final DataInputStream in, final DataOutputStream out) throws IOException {
        final Bus bus = bus(in.readInt());
        final Topic<Object> topic = Wire.readTopic(in, codecs);
        final BusPublication<Object> pub;
        try {
            pub = bus.publication(topic);
        } catch (final RuntimeException ex) {
            out.writeByte(Wire.RESP_ERROR);
            Wire.writeError(out, ex);
            out.flush();
            return;
        }
        out.writeByte(Wire.RESP_OK);
        out.writeInt(pub.sessionId());
        out.flush();
        try {
            while (true) {
                final byte op = in.readByte();
                try {
                    switch (op) {
                        case Wire.OP_OFFER -> {
                            final int status = pub.offer(Wire.decode(topic.codec(), Wire.readBytes(in)));
                            out.writeByte(Wire.RESP_OK);
                            out.writeInt(status);
                        }
                        case Wire.OP_FLUSH -> {
                            final int status = pub.flush();
                            out.writeByte(Wire.RESP_OK);
                            out.writeInt(status);
                        }
                        case Wire.OP_IS_CONNECTED -> {
                            final boolean c = pub.isConnected();
                            out.writeByte(Wire.RESP_OK);
                            out.writeBoolean(c);
                        }
                        case Wire.OP_CLOSE_PUBLICATION -> {
                            pub.close();
                            out.writeByte(Wire.RESP_OK);
                        }
                        default -> throw new IOException("unknown publication op " + op);
                    }
                } catch (final RuntimeException ex) {
                    out.writeByte(Wire.RESP_ERROR);
                    Wire.writeError(out, ex);
                }
                out.flush();
            }
        } finally {
            pub.close();
        }
    }
}
