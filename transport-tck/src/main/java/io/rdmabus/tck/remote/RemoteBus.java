package io.rdmabus.tck.remote;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.rdmabus.Bus;
import io.rdmabus.BusConfigurationException;
import io.rdmabus.BusPublication;
import io.rdmabus.BusStats;
import io.rdmabus.PublishStatus;
import io.rdmabus.Received;
import io.rdmabus.SubscribeOptions;
import io.rdmabus.Topic;

import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;

import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * A {@link Bus} that lives in a {@link BusHost} process, used through this proxy as if it were local.
 *
 * <p>What is forwarded, and how faithfully:
 * <ul>
 *   <li>{@code subscribeReceived}: the host subscribes when this {@code Flux} is subscribed, and {@code subscribe}
 *       returns only once the remote bus registered the subscription; every {@code request(n)} is forwarded as is and
 *       the host requests exactly that from the bus (so ring, policy and credits see the same demand); a value arriving
 *       beyond demand fails the {@code Flux} (overflow {@code ERROR}, as the bus's own {@code Flux}). {@code dispose} is
 *       synchronous: it returns once the remote bus dropped the subscription (except when called from inside
 *       {@code onNext}). Values cross as the topic codec's bytes; session, sequence, timestamp and {@code lostBefore}
 *       are the remote bus's.</li>
 *   <li>{@code publish}: the bus's requests for values are forwarded to {@code values}; the {@code Mono} ends with the
 *       remote bus's completion or error (same exception class, e.g. {@code MessageTooLargeException}).</li>
 *   <li>{@code publication}: each call (offer, flush, isConnected, close) is one round trip; the status codes are the
 *       remote publication's. After {@code close()} the proxy answers {@code CLOSED} / not connected itself.</li>
 *   <li>{@code stats}, {@code close}, {@code transportName}: the remote bus's. {@code close} also fails if a thread named
 *       after the bus is still alive 10 s later (checked by the host, as the TCK checks local buses).</li>
 * </ul>
 * Not supported, and refused with {@link UnsupportedOperationException} when used: codecs outside
 * {@link RemoteCodecs}, conflation keys that are not {@link java.io.Serializable}. A broken connection to the host fails
 * the affected {@code Flux}/{@code Mono}/call with an {@link IllegalStateException} that says so, never a bus exception.
 */
public final class RemoteBus implements Bus {
    private static final long SUBSCRIBE_CONFIRM_S = 60;
    private static final long CANCEL_CONFIRM_S = 10;

    private final RemoteBusClient client;
    private final int id;
    private final String name;
    private final String transport;
    private final AtomicBoolean closed = new AtomicBoolean();

    RemoteBus(final RemoteBusClient client, final int id, final String name, final String transport) {
        this.client = client;
        this.id = id;
        this.name = name;
        this.transport = transport;
    }

    /** @return true once {@link #close()} was called (the endpoint is then no longer a useful seed) */
    public boolean isClosed() {
        return closed.get();
    }

    @Override
    public <T> Flux<Received<T>> subscribeReceived(final Topic<T> topic, final SubscribeOptions<T> options) {
        if (topic == null || options == null) {
            throw new BusConfigurationException("subscribe needs a topic and options (SubscribeOptions.defaults())");
        }
        client.codecs().check(topic);
        if (options.conflationKey() != null) {
            Wire.serializedKey(options.conflationKey()); // refuse a key that cannot cross before anything is subscribed
        }
        return Flux.create(sink -> new ClientSubscription<>(topic, options, sink).start(), FluxSink.OverflowStrategy.ERROR);
    }

    @Override
    public <T> Mono<Void> publish(final Topic<T> topic, final Publisher<? extends T> values) {
        if (topic == null || values == null) {
            throw new BusConfigurationException("publish needs a topic and values");
        }
        client.codecs().check(topic);
        return Mono.create(done -> new ClientPublish<T>(topic, values, done).start());
    }

    @Override
    public <T> BusPublication<T> publication(final Topic<T> topic) {
        if (topic == null) {
            throw new BusConfigurationException("publication needs a topic");
        }
        client.codecs().check(topic);
        return new RemotePublication<>(topic);
    }

    @Override
    public String transportName() {
        return transport;
    }

    @Override
    public BusStats stats() {
        return client.call(Wire.OP_STATS, o -> o.writeInt(id), Wire::readStats);
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            client.call(Wire.OP_CLOSE_BUS, o -> o.writeInt(id), i -> null);
        }
    }

    @Override
    public String toString() {
        return "RemoteBus[" + name + " #" + id + " on " + client + "]";
    }

    private static IllegalStateException lost(final String what, final Throwable cause) {
        return new IllegalStateException("connection to the bus host lost (" + what + "): " + cause, cause);
    }

    private static void closeQuietly(final Socket socket) {
        try {
            socket.close();
        } catch (final IOException ignored) {
            // closing anyway
        }
    }

    // ------------------------------------------------------------------------------------------------ subscribe

    private final class ClientSubscription<T> {
        private final Topic<T> topic;
        private final SubscribeOptions<T> options;
        private final FluxSink<Received<T>> sink;
        private final CountDownLatch subscribed = new CountDownLatch(1);
        private final CountDownLatch cancelled = new CountDownLatch(1);
        private final AtomicBoolean disposed = new AtomicBoolean();
        private volatile boolean terminated;
        private Socket socket;
        private DataOutputStream out;
        private Thread reader;

        ClientSubscription(final Topic<T> topic, final SubscribeOptions<T> options, final FluxSink<Received<T>> sink) {
            this.topic = topic;
            this.options = options;
            this.sink = sink;
        }

        void start() {
            final DataInputStream in;
            try {
                socket = client.openData(Wire.KIND_SUBSCRIBE);
                in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
                out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
                out.writeInt(id);
                Wire.writeTopic(out, topic);
                Wire.writeOptions(out, options);
                out.flush();
            } catch (final IOException ex) {
                if (socket != null) {
                    closeQuietly(socket);
                }
                sink.error(lost("subscribe " + topic.name(), ex));
                return;
            }
            reader = Thread.ofPlatform().daemon().name("remote-sub-" + topic.name()).start(() -> read(in));
            sink.onRequest(n -> send(o -> {
                o.writeByte(Wire.MSG_REQUEST);
                o.writeLong(n);
            }));
            sink.onDispose(this::dispose);
            try {
                if (!subscribed.await(SUBSCRIBE_CONFIRM_S, TimeUnit.SECONDS)) {
                    sink.error(new IllegalStateException("the bus host did not confirm the subscription to " + topic.name() + " within "
                        + SUBSCRIBE_CONFIRM_S + " s"));
                }
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
                sink.error(ex);
            }
        }

        private void read(final DataInputStream in) {
            try {
                while (true) {
                    final byte msg = in.readByte();
                    switch (msg) {
                        case Wire.MSG_SUBSCRIBED -> subscribed.countDown();
                        case Wire.MSG_NEXT -> {
                            final int session = in.readInt();
                            final long sequence = in.readLong();
                            final long timestamp = in.readLong();
                            final long lost = in.readLong();
                            final T value = Wire.decode(topic.codec(), Wire.readBytes(in));
                            sink.next(new Received<>(value, session, sequence, timestamp, lost));
                        }
                        case Wire.MSG_ERROR -> {
                            final Throwable error = Wire.readError(in);
                            terminated = true;
                            subscribed.countDown();
                            sink.error(error);
                        }
                        case Wire.MSG_COMPLETE -> {
                            terminated = true;
                            sink.complete();
                        }
                        case Wire.MSG_CANCEL -> {
                            return; // the host dropped the subscription
                        }
                        default -> throw new IOException("unknown subscribe message " + msg);
                    }
                }
            } catch (final IOException | RuntimeException ex) {
                if (!disposed.get() && !terminated) {
                    terminated = true;
                    sink.error(lost("subscription to " + topic.name(), ex));
                }
            } finally {
                subscribed.countDown();
                cancelled.countDown();
                closeQuietly(socket);
            }
        }

        private void send(final RemoteBusClient.Args write) {
            synchronized (this) {
                try {
                    write.write(out);
                    out.flush();
                } catch (final IOException ignored) {
                    // the reader sees the broken connection and fails the Flux
                }
            }
        }

        /** Cancel or termination: the host drops the subscription; waits for that unless called by the reader itself. */
        private void dispose() {
            if (!disposed.compareAndSet(false, true)) {
                return;
            }
            send(o -> o.writeByte(Wire.MSG_CANCEL));
            if (Thread.currentThread() == reader) {
                return; // e.g. take(n) cancelling inside onNext: the reader reads the acknowledgement and closes
            }
            try {
                if (!cancelled.await(CANCEL_CONFIRM_S, TimeUnit.SECONDS)) {
                    System.err.println("remote bus " + name + ": the host did not confirm the cancel of " + topic.name() + " within "
                        + CANCEL_CONFIRM_S + " s");
                }
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
            } finally {
                closeQuietly(socket);
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ publish

    private final class ClientPublish<T> implements CoreSubscriber<T> {
        private final Topic<T> topic;
        private final Publisher<? extends T> values;
        private final MonoSink<Void> done;
        private final AtomicBoolean finished = new AtomicBoolean();
        private volatile Subscription upstream;
        private Socket socket;
        private DataOutputStream out;

        ClientPublish(final Topic<T> topic, final Publisher<? extends T> values, final MonoSink<Void> done) {
            this.topic = topic;
            this.values = values;
            this.done = done;
        }

        void start() {
            final DataInputStream in;
            try {
                socket = client.openData(Wire.KIND_PUBLISH);
                in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
                out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
                out.writeInt(id);
                Wire.writeTopic(out, topic);
                out.flush();
            } catch (final IOException ex) {
                if (socket != null) {
                    closeQuietly(socket);
                }
                done.error(lost("publish " + topic.name(), ex));
                return;
            }
            done.onDispose(this::dispose);
            // like the local bus, values are subscribed at once; the host's requests are read only after onSubscribe
            values.subscribe(this);
            Thread.ofPlatform().daemon().name("remote-pub-" + topic.name()).start(() -> read(in));
        }

        @Override
        public void onSubscribe(final Subscription s) {
            upstream = s;
        }

        @Override
        public void onNext(final T value) {
            if (finished.get()) {
                return;
            }
            final byte[] bytes;
            try {
                bytes = Wire.encode(topic.codec(), value);
            } catch (final RuntimeException ex) {
                upstream.cancel();
                finish(ex);
                return;
            }
            send(o -> {
                o.writeByte(Wire.MSG_VALUE);
                Wire.writeBytes(o, bytes);
            });
        }

        @Override
        public void onError(final Throwable t) {
            send(o -> {
                o.writeByte(Wire.MSG_FAIL);
                Wire.writeError(o, t);
            });
        }

        @Override
        public void onComplete() {
            send(o -> o.writeByte(Wire.MSG_COMPLETE));
        }

        private void read(final DataInputStream in) {
            try {
                while (!finished.get()) {
                    final byte msg = in.readByte();
                    switch (msg) {
                        case Wire.MSG_REQUEST -> upstream.request(in.readLong());
                        case Wire.MSG_CANCEL -> upstream.cancel();
                        case Wire.MSG_DONE -> finish(null);
                        case Wire.MSG_ERROR -> {
                            final Throwable error = Wire.readError(in);
                            upstream.cancel();
                            finish(error);
                        }
                        default -> throw new IOException("unknown publish message " + msg);
                    }
                }
            } catch (final IOException | RuntimeException ex) {
                if (!finished.get()) {
                    upstream.cancel();
                    finish(lost("publish to " + topic.name(), ex));
                }
            }
        }

        private void finish(final Throwable error) {
            if (finished.compareAndSet(false, true)) {
                if (error == null) {
                    done.success();
                } else {
                    done.error(error);
                }
            }
        }

        private void send(final RemoteBusClient.Args write) {
            synchronized (this) {
                try {
                    write.write(out);
                    out.flush();
                } catch (final IOException ignored) {
                    // the reader sees the broken connection and fails the Mono
                }
            }
        }

        /** After the end, or when the Mono is cancelled: tells the host, stops the values, closes the connection. */
        private void dispose() {
            if (finished.compareAndSet(false, true)) {
                send(o -> o.writeByte(Wire.MSG_CANCEL));
                final Subscription s = upstream;
                if (s != null) {
                    s.cancel();
                }
            }
            closeQuietly(socket);
        }
    }

    // ------------------------------------------------------------------------------------------------ publication

    private final class RemotePublication<T> implements BusPublication<T> {
        private final Topic<T> topic;
        private final Socket socket;
        private final DataInputStream in;
        private final DataOutputStream out;
        private final int sessionId;
        private boolean closed;

        RemotePublication(final Topic<T> topic) {
            this.topic = topic;
            try {
                socket = client.openData(Wire.KIND_PUBLICATION);
                in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
                out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
                out.writeInt(id);
                Wire.writeTopic(out, topic);
                out.flush();
                if (in.readByte() == Wire.RESP_ERROR) {
                    final Throwable error = Wire.readError(in);
                    socket.close();
                    throw error instanceof RuntimeException re ? re : new IllegalStateException(error.getMessage(), error);
                }
                sessionId = in.readInt();
            } catch (final IOException ex) {
                throw lost("publication " + topic.name(), ex);
            }
        }

        private synchronized <R> R call(final byte op, final RemoteBusClient.Args args, final RemoteBusClient.Result<R> result) {
            try {
                out.writeByte(op);
                args.write(out);
                out.flush();
                if (in.readByte() == Wire.RESP_ERROR) {
                    final Throwable error = Wire.readError(in);
                    throw error instanceof RuntimeException re ? re : new IllegalStateException(error.getMessage(), error);
                }
                return result.read(in);
            } catch (final IOException ex) {
                throw lost("publication " + topic.name(), ex);
            }
        }

        @Override
        public synchronized int offer(final T value) {
            if (closed) {
                return PublishStatus.CLOSED;
            }
            final byte[] bytes = Wire.encode(topic.codec(), value);
            return call(Wire.OP_OFFER, o -> Wire.writeBytes(o, bytes), DataInputStream::readInt);
        }

        @Override
        public synchronized int flush() {
            return closed ? PublishStatus.CLOSED : call(Wire.OP_FLUSH, o -> { }, DataInputStream::readInt);
        }

        @Override
        public synchronized boolean isConnected() {
            return !closed && call(Wire.OP_IS_CONNECTED, o -> { }, DataInputStream::readBoolean);
        }

        @Override
        public int sessionId() {
            return sessionId;
        }

        @Override
        public Topic<T> topic() {
            return topic;
        }

        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            try {
                call(Wire.OP_CLOSE_PUBLICATION, o -> { }, i -> null);
            } finally {
                closeQuietly(socket);
            }
        }
    }
}
