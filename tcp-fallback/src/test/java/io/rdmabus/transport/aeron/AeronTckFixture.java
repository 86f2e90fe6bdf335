package io.rdmabus.transport.aeron;

import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.aeron.CommonContext;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.rdmabus.Bus;
import io.rdmabus.BusBuilder;
import io.rdmabus.IdleStrategies;
import io.rdmabus.spi.Discovery;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.tck.InvokedBus;
import io.rdmabus.tck.TckFixture;

import org.agrona.CloseHelper;

/**
 * TCK fixture for the three Aeron configurations, all on real media drivers:
 * <ul>
 *   <li>UDP unicast: one embedded driver per bus; each bus gets a control endpoint from a fixed pool of loopback
 *   ports (round robin) and every pool port as a seed, so a bus reaches buses created before and after it.</li>
 *   <li>UDP multicast: one embedded driver per bus, all on one group on the loopback interface.</li>
 *   <li>IPC: one media driver launched by the fixture and shared by every bus through {@code aeron.dir}.</li>
 * </ul>
 */
final class AeronTckFixture implements TckFixture {
    /** Which configuration. */
    enum Mode { UDP_UNICAST, UDP_MULTICAST, IPC }

    private static final int ENDPOINT_POOL = 12;

    private final Mode mode;
    private final io.rdmabus.ThreadingMode threadingMode;
    private final List<String> endpoints = new ArrayList<>();
    private final AtomicInteger nextEndpoint = new AtomicInteger();
    private final String multicastGroup;
    private final MediaDriver sharedDriver;
    private final List<Transport> rawTransports = new CopyOnWriteArrayList<>();

    AeronTckFixture(final Mode mode) {
        this(mode, io.rdmabus.ThreadingMode.SHARED);
    }

    /** @param threadingMode the buses' threading mode; INVOKER buses are driven by a loop thread, as an application would */
    AeronTckFixture(final Mode mode, final io.rdmabus.ThreadingMode threadingMode) {
        this.mode = mode;
        this.threadingMode = threadingMode;
        if (mode == Mode.UDP_UNICAST) {
            for (int i = 0; i < ENDPOINT_POOL; i++) {
                endpoints.add("127.0.0.1:" + AeronTestSupport.freeUdpPort());
            }
        }
        this.multicastGroup = mode == Mode.UDP_MULTICAST ? "239.255.90." + (1 + 2 * (int) (ProcessHandle.current().pid() % 120)) + ":"
            + AeronTestSupport.freeUdpPort() : null;
        this.sharedDriver = mode == Mode.IPC ? MediaDriver.launchEmbedded(new MediaDriver.Context()
            .aeronDirectoryName(CommonContext.getAeronDirectoryName() + "-rdma-bus-tck-ipc-" + ProcessHandle.current().pid())
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .threadingMode(ThreadingMode.SHARED)
            .sharedIdleStrategy(IdleStrategies.supplier("backoff").get())
            .asyncExecutorEnabled(false)
            .termBufferSparseFile(true)
            .ipcTermBufferLength(AeronTransportConfig.DEFAULT_TERM_LENGTH)
            .sharedThreadFactory(r -> new Thread(r, "rdma-bus-aeron-ipc-driver-tck-fixture"))) : null;
    }

    @Override
    public String name() {
        return switch (mode) {
            case UDP_UNICAST -> "aeron-udp unicast (multi-destination-cast, one driver per bus) on loopback";
            case UDP_MULTICAST -> "aeron-udp multicast " + multicastGroup + " on loopback";
            case IPC -> "aeron-ipc through one shared media driver";
        } + ", threading " + threadingMode;
    }

    private Map<String, String> properties() {
        final Map<String, String> p = new HashMap<>();
        switch (mode) {
            case UDP_UNICAST -> p.put(AeronTransportConfig.ENDPOINT, endpoints.get(Math.floorMod(nextEndpoint.getAndIncrement(), ENDPOINT_POOL)));
            case UDP_MULTICAST -> p.put(AeronTransportConfig.MULTICAST_GROUP, multicastGroup);
            case IPC -> p.put(AeronTransportConfig.AERON_DIR, sharedDriver.aeronDirectoryName());
            default -> throw new IllegalStateException();
        }
        return p;
    }

    private String factoryName() {
        return mode == Mode.IPC ? AeronMedium.IPC.factoryName() : AeronMedium.UDP.factoryName();
    }

    private Discovery discovery() {
        return mode == Mode.UDP_UNICAST ? new StaticSeedDiscovery(Map.of(factoryName(), endpoints)) : StaticSeedDiscovery.none();
    }

    @Override
    public Bus newBus(final String busName) {
        final BusBuilder builder = Bus.builder().name(busName).transport(factoryName()).discovery(discovery()).idleStrategy("backoff")
            .threadingMode(threadingMode);
        properties().forEach(builder::transportProperty);
        final Bus bus = builder.build();
        return InvokedBus.driven(bus, threadingMode);
    }

    @Override
    public Transport newRawTransport() {
        final Transport transport = mode == Mode.IPC ? new AeronIpcTransportFactory().create(properties())
            : new AeronUdpTransportFactory().create(properties());
        transport.start(new TransportContext("raw-" + rawTransports.size(), IdleStrategies.supplier("backoff"), Throwable::printStackTrace,
            discovery()));
        rawTransports.add(transport);
        return transport;
    }

    @Override
    public int maxBestEffortFrameLength() {
        return AeronTransportConfig.DEFAULT_MTU - io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;
    }

    /** Term length 1 MiB: a publisher runs at most one term ahead of the slowest reliable subscriber (window: half a term). */
    @Override
    public long maxBufferedReliableBytes() {
        return AeronTransportConfig.DEFAULT_TERM_LENGTH;
    }

    @Override
    public void assertTransportResourcesReleased(final String busName) {
        final File base = new File(CommonContext.getAeronDirectoryName()).getParentFile();
        final String prefix = new File(CommonContext.getAeronDirectoryName()).getName() + "-rdma-bus-" + busName + "-";
        final String[] left = base.list((dir, n) -> n.startsWith(prefix));
        if (left != null && left.length > 0) {
            throw new AssertionError("media driver directories of closed bus " + busName + " still exist in " + base + ": " + List.of(left));
        }
    }

    @Override
    public void close() {
        rawTransports.forEach(CloseHelper::quietClose);
        CloseHelper.close(sharedDriver);
    }
}
