package io.rdmabus.rdma.transport;

import io.rdmabus.spi.PropertyDescriptor;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportFactory;

import java.util.List;
import java.util.Map;

/**
 * ServiceLoader entry for the RDMA transport, name {@code rdma}, the highest priority of the project's transports so
 * {@code "auto"} picks it wherever an RDMA device has an ACTIVE port. Probing reads sysfs first and loads
 * libibverbs/librdmacm only if a device is present, so it never fails on a host without RDMA.
 */
public final class RdmaTransportFactory implements TransportFactory {
    /** Above Aeron and TCP. */
    public static final int PRIORITY = 300;

    /**
     * The properties, described: keys and defaults come from {@link RdmaTransportConfig#knownProperties()} (the one list
     * the parser accepts); the ranges here let configuration from outside code say what is allowed before parsing, and
     * the parser still checks what depends on several keys (e.g. {@code rdma.retention.frames} >= {@code rdma.send.buffers}).
     */
    private static final Map<String, PropertyDescriptor> PROPERTIES = describe(RdmaTransportConfig.knownProperties());

    /** For ServiceLoader. */
    public RdmaTransportFactory() {
    }

    @Override
    public String name() {
        return RdmaTransport.NAME;
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    @Override
    public String unavailableReason() {
        return RdmaDevices.unavailableReason();
    }

    @Override
    public Map<String, PropertyDescriptor> properties() {
        return PROPERTIES;
    }

    @Override
    public Transport create(final Map<String, String> properties) {
        return new RdmaTransport(RdmaTransportConfig.parse(properties));
    }

    /**
     * @param defaults the known keys with their defaults
     * @return descriptors: the described known keys in the order below, then any other known key (not described)
     */
    static Map<String, PropertyDescriptor> describe(final Map<String, String> defaults) {
        final List<PropertyDescriptor> described = List.of(
            text(defaults, "rdma.device", "RDMA device name, e.g. rxe0 (empty: the first device with an ACTIVE port)"),
            integer(defaults, "rdma.port", 1, 255, "device port number"),
            text(defaults, "rdma.bind", "IPv4 address rdma_cm binds on (empty: the device's netdev address)"),
            integer(defaults, "rdma.cm.port.base", 1, 65535, "first rdma_cm listen port tried"),
            integer(defaults, "rdma.cm.port.range", 1, 65535, "listen ports tried from the base"),
            integer(defaults, "rdma.frame.bytes", 256, 1 << 20, "largest reliable frame, bus header included"),
            integer(defaults, "rdma.recv.buffers", 17, 4096, "receive buffers per connection (16 for control, the rest is the credit window)"),
            integer(defaults, "rdma.send.buffers", 2, 4096, "registered send slots per publication"),
            integer(defaults, "rdma.ud.payload.bytes", 256, 4096, "datagram payload bound (path MTU) of best-effort frames"),
            integer(defaults, "rdma.connect.timeout.ms", 100, 60_000, "bound on one rdma_cm connect or accept, ms"),
            integer(defaults, "rdma.command.timeout.ms", 100, 600_000,
                "bound on an application thread's wait for the poller to take its command (e.g. a subscription), ms"),
            integer(defaults, "rdma.retention.frames", 2, 65536, "frames a RELIABLE publication retains for resume (>= rdma.send.buffers)"),
            integer(defaults, "rdma.retention.resume.ms", 0, 3_600_000, "how long a subscriber keeps resume state after a lost connection, ms"),
            integer(defaults, "rdma.keepalive.ms", 0, 600_000, "idle connection keepalive, ms (0 = never, else >= 10)"),
            integer(defaults, "rdma.send.stall.ms", 0, 3_600_000,
                "close a connection whose send got no completion for this long, ms (0 = never, else >= 1000)"),
            integer(defaults, "rdma.ack.timeout.exp", 0, 31, "RC local ACK timeout exponent, 4.096 us x 2^exp (0 = the kernel's)"),
            choice(defaults, "rdma.ud.mode", "BEST_EFFORT path", "unicast", "multicast", "rc"),
            text(defaults, "rdma.domain", "bus identity: the UD Q_Key and multicast groups derive from it"),
            text(defaults, "rdma.ud.groups", "IPv4 multicast range (CIDR) of the per-topic groups"),
            integer(defaults, "rdma.ud.recv.buffers", 2, 16384, "UD receive buffers per transport"),
            integer(defaults, "rdma.ud.recovery.frames", 0, Wire.NAK_MAX_FRAMES,
                "UD gap recovery (NAK): frames retained per UD publication and held per stream (0 = off)"),
            integer(defaults, "rdma.ud.recovery.ms", 1, 10_000, "UD gap recovery: how long a missing frame is waited for, ms"),
            text(defaults, "rdma.ud.recovery.topics", "UD gap recovery: the BEST_EFFORT topics it is for, comma-separated (empty: all)"),
            new PropertyDescriptor("rdma.secret", defaults.getOrDefault("rdma.secret", ""),
                "the bus secret (at least 16 bytes) peers must prove; none = no authentication", PropertyDescriptor.Type.SECRET, 0, 0, List.of()),
            text(defaults, "rdma.secret.file", "a file holding the bus secret (preferred over rdma.secret)"),
            choice(defaults, "rdma.discovery", "how peers are found: the seed list, or also adverts on the UD control group", "seeds", "multicast"),
            integer(defaults, "rdma.discovery.interval.ms", 100, 60_000, "advert interval, ms"),
            text(defaults, "rdma.discovery.group", "control multicast group (empty: derived from rdma.domain)"));
        return PropertyDescriptor.declare(defaults.keySet(),
            described.stream().filter(d -> defaults.containsKey(d.key())).toArray(PropertyDescriptor[]::new));
    }

    private static PropertyDescriptor text(final Map<String, String> defaults, final String key, final String description) {
        return PropertyDescriptor.text(key, defaults.getOrDefault(key, ""), description);
    }

    private static PropertyDescriptor integer(final Map<String, String> defaults, final String key, final long min, final long max,
                                              final String description) {
        return new PropertyDescriptor(key, defaults.getOrDefault(key, ""), description, PropertyDescriptor.Type.INTEGER, min, max, List.of());
    }

    private static PropertyDescriptor choice(final Map<String, String> defaults, final String key, final String description,
                                             final String... choices) {
        return new PropertyDescriptor(key, defaults.getOrDefault(key, ""), description, PropertyDescriptor.Type.CHOICE, 0, 0, List.of(choices));
    }
}
