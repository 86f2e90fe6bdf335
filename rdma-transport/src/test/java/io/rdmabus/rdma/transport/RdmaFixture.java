package io.rdmabus.rdma.transport;

import io.rdmabus.Bus;
import io.rdmabus.IdleStrategies;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.ThreadingMode;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.tck.InvokedBus;
import io.rdmabus.tck.TckFixture;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;


/**
 * Several RDMA buses in one JVM on one rxe device (rxe loopback): each bus listens on its own rdma_cm port (never
 * reused within a run, so a seed always names one bus) and gets the endpoints of the buses still open as seeds. Its
 * buses run in the threading mode it was made with (default {@code SHARED}); an {@code INVOKER} bus comes with an
 * application loop that drives it ({@link InvokedBus}), so its rdma poller runs on that loop's thread.
 */
final class RdmaFixture implements TckFixture {
    private static final int PORT_BASE = 17800;
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "rdma-fixture-watchdog");
        t.setDaemon(true);
        return t;
    });
    private final AtomicInteger nextPort;
    private final List<RdmaTransport> transports = new ArrayList<>();
    private final Map<Bus, RdmaTransport> byBus = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, String> extra;
    private final ThreadingMode threadingMode;
    /**
     * How long a bus's start may take before the watchdog prints every thread (the only view of a hang inside the
     * lab): 20 s once the fixture is warm; during the warm-up 120 s, since the first transport's start alone takes ~35 s
     * under TCG (see {@link #warmUp}), and a dump there is not a hang.
     */
    private volatile int startWatchdogSeconds = 120;

    RdmaFixture(final Map<String, String> extraProperties) {
        this(extraProperties, PORT_BASE);
    }

    /**
     * @param extraProperties rdma properties of every transport (e.g. the bus secret)
     * @param portBase        first rdma_cm port; each bus takes the next one
     */
    RdmaFixture(final Map<String, String> extraProperties, final int portBase) {
        this(extraProperties, portBase, ThreadingMode.SHARED);
    }

    /**
     * @param extraProperties rdma properties of every transport (e.g. the bus secret)
     * @param portBase        first rdma_cm port; each bus takes the next one
     * @param threadingMode   the buses' threading mode
     */
    RdmaFixture(final Map<String, String> extraProperties, final int portBase, final ThreadingMode threadingMode) {
        this.extra = Map.copyOf(extraProperties);
        this.threadingMode = threadingMode;
        this.nextPort = new AtomicInteger(portBase);
        warmUp();
        startWatchdogSeconds = 20;
    }

    /**
     * Under QEMU TCG the first transport's start takes ~35 s (class initialisation of the FFM bindings: every downcall
     * handle is spun up in emulation) and the first bus round trip another ~40 s (class loading and JIT of the bus,
     * Reactor and Disruptor paths), which would eat the first case's timeout. So the fixture, like a media driver in
     * an Aeron fixture, pays that once before the suite: two buses exchange reliable and best-effort messages and close.
     */
    private void warmUp() {
        long t0 = System.nanoTime();
        int n = 2000;
        Bus a = newBus("warmup-a");
        Bus b = newBus("warmup-b");
        try {
            for (Delivery delivery : Delivery.values()) {
                Topic<String> topic = Topic.of("warmup-" + delivery.name().toLowerCase(java.util.Locale.ROOT), Codecs.utf8(), delivery);
                AtomicInteger received = new AtomicInteger();
                reactor.core.Disposable sub = a.subscribe(topic).subscribe(v -> received.incrementAndGet());
                BusPublication<String> pub = b.publication(topic);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                int sent = 0;
                while (received.get() < n && System.nanoTime() < deadline) {
                    if (sent < n + 50 && pub.offer("w" + sent) == PublishStatus.OK) {
                        sent++;
                    } else {
                        LockSupport.parkNanos(200_000);
                    }
                }
                pub.close();
                sub.dispose();
                System.err.println("rdma fixture warm-up " + delivery + ": " + received.get() + "/" + sent + " messages after "
                        + (System.nanoTime() - t0) / 1_000_000 + " ms");
            }
        } finally {
            b.close();
            a.close();
        }
    }

    @Override
    public String name() {
        return "rdma on one rxe device (loopback; best effort over " + RdmaTransportConfig.parse(extra).ud().mode() + "; "
                + threadingMode + " buses)";
    }

    private RdmaTransport newTransport() {
        Map<String, String> props = new HashMap<>(extra);
        props.put(RdmaTransportConfig.CM_PORT_BASE, String.valueOf(nextPort.getAndIncrement()));
        props.put(RdmaTransportConfig.CM_PORT_RANGE, "1");
        String self = System.getenv("LAB_SELF_IP");
        if (self != null && !self.isBlank()) {
            props.put(RdmaTransportConfig.BIND, self.trim());
        }
        return new RdmaTransport(RdmaTransportConfig.parse(props));
    }

    private synchronized List<String> openEndpoints() {
        List<String> open = new ArrayList<>();
        transports.removeIf(RdmaTransport::isClosed);
        for (RdmaTransport t : transports) {
            open.add(t.listenEndpoint());
        }
        return open;
    }

    private static StaticSeedDiscovery seeds(final List<String> endpoints) {
        return new StaticSeedDiscovery(Map.of(RdmaTransport.NAME, List.copyOf(endpoints)));
    }

    private synchronized void register(final RdmaTransport t) {
        transports.add(t);
    }

    @Override
    public Bus newBus(final String busName) {
        return newNode(busName, openEndpoints()).bus();
    }

    /**
     * @param busName the bus name
     * @param seedEndpoints exactly the endpoints the new bus dials (a split fixture passes those of both sides)
     * @return a started bus and its listen endpoint
     */
    io.rdmabus.tck.remote.BusNode newNode(final String busName, final List<String> seedEndpoints) {
        RdmaTransport t = newTransport();
        int watchdogSeconds = startWatchdogSeconds;
        ScheduledFuture<?> dump = WATCHDOG.schedule(() -> dumpThreads("newBus(" + busName + ") still running after " + watchdogSeconds
                + " s"), watchdogSeconds, TimeUnit.SECONDS);
        try {
            Bus bus = InvokedBus.driven(Bus.builder().name(busName).transport(t).discovery(seeds(seedEndpoints)).idleStrategy("backoff")
                    .threadingMode(threadingMode).build(), threadingMode);
            register(t);
            byBus.put(bus, t);
            return new io.rdmabus.tck.remote.BusNode(bus, t.listenEndpoint());
        } finally {
            dump.cancel(false);
        }
    }

    /** Prints every thread's stack to stderr: the only way to see a hang inside the guest lab. */
    static void dumpThreads(final String why) {
        StringBuilder sb = new StringBuilder("=== thread dump: ").append(why).append('\n');
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            sb.append('"').append(e.getKey().getName()).append("\" ").append(e.getKey().getState()).append('\n');
            for (StackTraceElement el : e.getValue()) {
                sb.append("    at ").append(el).append('\n');
            }
        }
        System.err.println(sb);
    }

    @Override
    public Transport newRawTransport() {
        return newRawTransport(openEndpoints());
    }

    /** @param seedEndpoints the endpoints it dials @return a started raw transport */
    Transport newRawTransport(final List<String> seedEndpoints) {
        RdmaTransport t = newTransport();
        t.start(new TransportContext("raw-" + nextPort.get(), IdleStrategies.supplier("backoff"), Throwable::printStackTrace, seeds(seedEndpoints)));
        register(t);
        return t;
    }

    /** @param bus a bus this fixture made @return whether its transport is closed */
    boolean isClosed(final Bus bus) {
        RdmaTransport t = byBus.get(bus);
        return t == null || t.isClosed();
    }

    @Override
    public int maxBestEffortFrameLength() {
        return RdmaTransportConfig.parse(extra).maxBestEffortFrameBytes();
    }

    @Override
    public long maxBufferedReliableBytes() {
        RdmaTransportConfig c = RdmaTransportConfig.parse(extra);
        // one publication's send slots plus the topic's window on the connection (frames received and not consumed, in
        // receive buffers or the topic's queue: recv.buffers - 16), each holding at most one frame
        return (long) (c.sendBuffers() + c.recvBuffers()) * c.maxFrameBytes();
    }

    @Override
    public void close() {
        List<RdmaTransport> copy;
        synchronized (this) {
            copy = new ArrayList<>(transports);
            transports.clear();
            byBus.clear();
        }
        for (RdmaTransport t : copy) {
            t.close();
        }
    }
}
