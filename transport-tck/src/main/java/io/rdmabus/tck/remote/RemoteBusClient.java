package io.rdmabus.tck.remote;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;

/**
 * The test side of a split TCK run: one control connection to a {@link BusHost}, and a factory of {@link RemoteBus}
 * proxies for the buses it creates there. Pings the host every few seconds so the host can tell a live client from a
 * vanished one.
 */
public final class RemoteBusClient implements AutoCloseable {
    private static final int CONNECT_TIMEOUT_MS = 10_000;
    private static final long PING_INTERVAL_MS = 5_000;

    private final InetSocketAddress host;
    private final RemoteCodecs codecs;
    private final Socket control;
    private final DataInputStream in;
    private final DataOutputStream out;
    private volatile boolean shutDown;

    private RemoteBusClient(final InetSocketAddress host, final RemoteCodecs codecs, final Socket control) throws IOException {
        this.host = host;
        this.codecs = codecs;
        this.control = control;
        this.in = new DataInputStream(new BufferedInputStream(control.getInputStream()));
        this.out = new DataOutputStream(new BufferedOutputStream(control.getOutputStream()));
    }

    /**
     * Connects, retrying while the host is not listening yet.
     *
     * @param host   the bus host's address
     * @param within how long to keep trying
     * @param codecs the codecs topics may use (the host must use the same registry)
     * @return the connected client
     * @throws IOException if no connection could be made in time
     */
    public static RemoteBusClient connect(final InetSocketAddress host, final Duration within, final RemoteCodecs codecs) throws IOException {
        final long deadlineNs = System.nanoTime() + within.toNanos();
        while (true) {
            try {
                final RemoteBusClient client = new RemoteBusClient(host, codecs, open(host, Wire.KIND_CONTROL));
                Thread.ofPlatform().daemon().name("bus-host-ping").start(client::pingLoop);
                return client;
            } catch (final IOException ex) {
                if (System.nanoTime() > deadlineNs) {
                    throw new IOException("no bus host at " + host + " within " + within + ": " + ex, ex);
                }
                try {
                    Thread.sleep(500);
                } catch (final InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while connecting to the bus host", ie);
                }
            }
        }
    }

    static Socket open(final InetSocketAddress host, final byte kind) throws IOException {
        final Socket socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.connect(host, CONNECT_TIMEOUT_MS);
            final DataOutputStream o = new DataOutputStream(socket.getOutputStream());
            o.writeInt(Wire.MAGIC);
            o.writeByte(kind);
            o.flush();
            return socket;
        } catch (final IOException ex) {
            socket.close();
            throw ex;
        }
    }

    /** Opens a data connection of {@code kind} (subscribe, publish, publication) to the host. */
    Socket openData(final byte kind) throws IOException {
        return open(host, kind);
    }

    RemoteCodecs codecs() {
        return codecs;
    }

    private void pingLoop() {
        while (!shutDown) {
            try {
                Thread.sleep(PING_INTERVAL_MS);
                if (!shutDown) {
                    call(Wire.OP_PING, o -> { }, i -> null);
                }
            } catch (final InterruptedException ex) {
                return;
            } catch (final RuntimeException ex) {
                if (!shutDown) {
                    System.err.println("bus host ping failed: " + ex);
                }
                return;
            }
        }
    }

    @FunctionalInterface
    interface Args {
        void write(DataOutputStream out) throws IOException;
    }

    @FunctionalInterface
    interface Result<R> {
        R read(DataInputStream in) throws IOException;
    }

    /** One request/response on the control connection; the host's error comes back as an exception of the same class. */
    synchronized <R> R call(final byte op, final Args args, final Result<R> result) {
        try {
            out.writeByte(op);
            args.write(out);
            out.flush();
            final byte status = in.readByte();
            if (status == Wire.RESP_ERROR) {
                final Throwable error = Wire.readError(in);
                throw error instanceof RuntimeException re ? re : new IllegalStateException(error.getMessage(), error);
            }
            return result.read(in);
        } catch (final IOException ex) {
            throw new IllegalStateException("control connection to the bus host " + host + " failed: " + ex, ex);
        }
    }

    /**
     * Creates a bus on the host.
     *
     * @param busName the bus name
     * @param seeds   the endpoints the new bus dials
     * @return a proxy for it and its endpoint
     */
    public BusNode newBus(final String busName, final List<String> seeds) {
        return call(Wire.OP_NEW_BUS, o -> {
            o.writeUTF(busName);
            o.writeInt(seeds.size());
            for (final String s : seeds) {
                o.writeUTF(s);
            }
        }, i -> {
            final int id = i.readInt();
            final String endpoint = i.readUTF();
            final String transport = i.readUTF();
            return new BusNode(new RemoteBus(this, id, busName, transport), endpoint);
        });
    }

    /**
     * Ends the session: the host closes every bus it still has, checks their threads are gone and stops serving.
     *
     * @throws IllegalStateException if the host reported threads of a closed bus still alive
     */
    public void shutdown() {
        if (shutDown) {
            return;
        }
        try {
            call(Wire.OP_SHUTDOWN, o -> { }, i -> null);
        } finally {
            shutDown = true;
        }
    }

    /** Shuts the session down if not done yet and closes the control connection. */
    @Override
    public void close() {
        try {
            shutdown();
        } finally {
            try {
                control.close();
            } catch (final IOException ignored) {
                // closing anyway
            }
        }
    }

    @Override
    public String toString() {
        return "bus host " + host;
    }
}
