package io.rdmabus.transport.aeron;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.rdmabus.BusConfigurationException;
import io.rdmabus.spi.PropertyDescriptor;

/**
 * Validated settings of an Aeron transport, parsed from the string properties given to
 * {@link io.rdmabus.spi.TransportFactory#create(Map)}. Unknown keys and bad values fail fast with a message that
 * lists the known keys or says what to change.
 *
 * @param medium           UDP or IPC
 * @param aeronDir         directory of an external (already running) media driver, or {@code null} to embed one per bus
 * @param dedicatedThreads embedded driver threading: {@code false} = one shared driver thread (default, 2-core friendly)
 * @param channel          full Aeron channel used as given for publications and subscriptions, or {@code null}
 * @param endpoint         UDP unicast: this node's publication control endpoint {@code host:port}
 * @param multicastGroup   UDP multicast group {@code address:port}, or {@code null} for unicast
 * @param interfaceAddress local interface for multicast and for unicast receive endpoints
 * @param streamIdBase     added to the topic id to form the Aeron stream id
 * @param mtuBytes         Aeron MTU (frame header + payload of one Aeron fragment)
 * @param termLengthBytes  Aeron term buffer length per publication (power of two)
 */
public record AeronTransportConfig(AeronMedium medium, String aeronDir, boolean dedicatedThreads, String channel, String endpoint,
                                   String multicastGroup, String interfaceAddress, int streamIdBase, int mtuBytes, int termLengthBytes) {
    /** External media driver directory; when set, no driver is embedded. */
    public static final String AERON_DIR = "aeron.dir";
    /** Embedded driver threading: {@code shared} (default) or {@code dedicated}. */
    public static final String DRIVER_THREADING = "driver.threading";
    /** A complete Aeron channel URI overriding the derived one. */
    public static final String CHANNEL = "channel";
    /** UDP unicast control endpoint of this node's publications, {@code host:port}. */
    public static final String ENDPOINT = "endpoint";
    /** UDP multicast group, {@code address:port}; selects multicast instead of unicast. */
    public static final String MULTICAST_GROUP = "multicast.group";
    /** Local interface address for UDP. */
    public static final String INTERFACE = "interface";
    /** Added to the topic id to form the stream id. */
    public static final String STREAM_ID_BASE = "stream.id.base";
    /** Aeron MTU in bytes. */
    public static final String MTU = "mtu";
    /** Aeron term length in bytes. */
    public static final String TERM_LENGTH = "term.length";

    /** Every key this transport accepts. */
    public static final Set<String> KNOWN_KEYS = Set.of(AERON_DIR, DRIVER_THREADING, CHANNEL, ENDPOINT, MULTICAST_GROUP, INTERFACE,
        STREAM_ID_BASE, MTU, TERM_LENGTH);

    /** Configuration from outside code names these keys with this prefix ({@code aeron.mtu}, {@code AERON_MTU}). */
    public static final String PROPERTY_PREFIX = "aeron.";
    /** The keys that apply to aeron-udp only. */
    static final Set<String> UDP_ONLY_KEYS = Set.of(ENDPOINT, MULTICAST_GROUP, INTERFACE);

    /** Default UDP unicast control endpoint. */
    public static final String DEFAULT_ENDPOINT = "127.0.0.1:40456";
    /** Default MTU: Aeron's default, fits a 1500-byte Ethernet frame. */
    public static final int DEFAULT_MTU = 1408;
    /** Default term length: 1 MiB keeps the log buffers (3 terms per publication) small. */
    public static final int DEFAULT_TERM_LENGTH = 1024 * 1024;

    private static final int MIN_MTU = 64;
    private static final int MAX_MTU = 65504;
    private static final int MIN_TERM = 64 * 1024;
    private static final int MAX_TERM = 1024 * 1024 * 1024;

    /**
     * @param medium     UDP or IPC
     * @param properties the transport properties
     * @return the validated configuration
     * @throws BusConfigurationException for unknown keys or bad values
     */
    public static AeronTransportConfig parse(final AeronMedium medium, final Map<String, String> properties) {
        final Map<String, String> p = new LinkedHashMap<>(properties == null ? Map.of() : properties);
        final Set<String> unknown = new TreeSet<>(p.keySet());
        unknown.removeAll(KNOWN_KEYS);
        if (!unknown.isEmpty()) {
            throw new BusConfigurationException("Unknown " + medium.factoryName() + " transport propert" + (unknown.size() == 1 ? "y " : "ies ")
                + unknown + ": known keys are " + new TreeSet<>(KNOWN_KEYS));
        }
        final String aeronDir = blankToNull(p.get(AERON_DIR));
        final String threading = p.getOrDefault(DRIVER_THREADING, "shared");
        final boolean dedicated = switch (threading) {
            case "shared" -> false;
            case "dedicated" -> true;
            default -> throw bad(medium, DRIVER_THREADING, threading, "use 'shared' (one driver thread) or 'dedicated' (three)");
        };
        final String channel = blankToNull(p.get(CHANNEL));
        if (channel != null) {
            final String prefix = medium == AeronMedium.IPC ? "aeron:ipc" : "aeron:udp";
            if (!channel.startsWith(prefix)) {
                throw bad(medium, CHANNEL, channel, "an " + medium.factoryName() + " channel starts with '" + prefix + "'");
            }
            if (channel.contains("?mtu=") || channel.contains("|mtu=")) {
                // the frame size the bus is told (capabilities) derives from the 'mtu' property
                throw bad(medium, CHANNEL, channel, "set the MTU with the '" + MTU + "' property, not inside the channel");
            }
        }
        final String endpoint = p.getOrDefault(ENDPOINT, DEFAULT_ENDPOINT);
        checkHostPort(medium, ENDPOINT, endpoint);
        final String group = blankToNull(p.get(MULTICAST_GROUP));
        if (group != null) {
            checkHostPort(medium, MULTICAST_GROUP, group);
            final String address = group.substring(0, group.lastIndexOf(':'));
            if (!isMulticastAddress(address)) {
                throw bad(medium, MULTICAST_GROUP, group, "the address must be IPv4 multicast (224.0.0.0 to 239.255.255.255), e.g. 239.255.0.1:40460");
            }
            if ((Integer.parseInt(address.substring(address.lastIndexOf('.') + 1)) & 1) == 0) {
                throw bad(medium, MULTICAST_GROUP, group, "Aeron sends data to an odd address and uses the next (even) one for control: "
                    + "make the last byte odd, e.g. 239.255.0.1");
            }
        }
        if (medium == AeronMedium.IPC) {
            for (final String udpOnly : UDP_ONLY_KEYS) {
                if (p.containsKey(udpOnly)) {
                    throw new BusConfigurationException("Property '" + udpOnly + "' applies to aeron-udp only, not aeron-ipc: remove it");
                }
            }
        }
        final String iface = p.getOrDefault(INTERFACE, "127.0.0.1");
        if (iface.isBlank() || iface.contains("|") || iface.contains("?")) {
            throw bad(medium, INTERFACE, iface, "give a local IP address such as 127.0.0.1");
        }
        final int base = parseInt(medium, STREAM_ID_BASE, p.getOrDefault(STREAM_ID_BASE, "0"));
        final int mtu = parseInt(medium, MTU, p.getOrDefault(MTU, Integer.toString(DEFAULT_MTU)));
        if (mtu < MIN_MTU || mtu > MAX_MTU || mtu % 32 != 0) {
            throw bad(medium, MTU, Integer.toString(mtu), "use a multiple of 32 between " + MIN_MTU + " and " + MAX_MTU
                + " (1408 fits a 1500-byte Ethernet MTU)");
        }
        final int term = parseInt(medium, TERM_LENGTH, p.getOrDefault(TERM_LENGTH, Integer.toString(DEFAULT_TERM_LENGTH)));
        if (term < MIN_TERM || term > MAX_TERM || Integer.bitCount(term) != 1) {
            throw bad(medium, TERM_LENGTH, Integer.toString(term), "use a power of two between " + MIN_TERM + " and " + MAX_TERM);
        }
        return new AeronTransportConfig(medium, aeronDir, dedicated, channel, endpoint, group, iface, base, mtu, term);
    }

    /**
     * @param medium UDP or IPC
     * @return the properties of that medium's factory, described, in the order to list them
     */
    static Map<String, PropertyDescriptor> properties(final AeronMedium medium) {
        final List<PropertyDescriptor> all = List.of(
            PropertyDescriptor.text(AERON_DIR, "", "directory of a running media driver to use instead of embedding one (IPC between buses needs it)"),
            PropertyDescriptor.choice(DRIVER_THREADING, "shared", "embedded driver: one shared thread or three dedicated ones", "shared", "dedicated"),
            PropertyDescriptor.text(CHANNEL, "", "a complete Aeron channel URI used as given instead of the derived one (docs/aeron-compat.md)"),
            PropertyDescriptor.text(ENDPOINT, DEFAULT_ENDPOINT, "UDP unicast: this node's publication control endpoint host:port"),
            PropertyDescriptor.text(MULTICAST_GROUP, "", "UDP multicast group address:port (last address byte odd); selects multicast"),
            PropertyDescriptor.text(INTERFACE, "127.0.0.1", "local interface address for UDP"),
            PropertyDescriptor.integer(STREAM_ID_BASE, 0, Integer.MIN_VALUE, Integer.MAX_VALUE, "added to the topic id to form the Aeron stream id"),
            PropertyDescriptor.integer(MTU, DEFAULT_MTU, MIN_MTU, MAX_MTU, "Aeron MTU, a multiple of 32 (1408 fits a 1500-byte Ethernet MTU)"),
            PropertyDescriptor.integer(TERM_LENGTH, DEFAULT_TERM_LENGTH, MIN_TERM, MAX_TERM, "term buffer length per publication, a power of two"));
        final List<String> keys = KNOWN_KEYS.stream().filter(k -> medium == AeronMedium.UDP || !UDP_ONLY_KEYS.contains(k)).toList();
        return PropertyDescriptor.declare(keys, all.stream().filter(d -> keys.contains(d.key())).toArray(PropertyDescriptor[]::new));
    }

    /**
     * The documented stream id derivation: {@code stream.id.base + topicId} (32-bit wrap-around).
     *
     * @param topicId the topic id carried in frame headers
     * @return the Aeron stream id
     */
    public int streamId(final int topicId) {
        return streamIdBase + topicId;
    }

    private static boolean isMulticastAddress(final String host) {
        final String[] parts = host.split("\\.");
        if (parts.length != 4) {
            return false;
        }
        try {
            final int first = Integer.parseInt(parts[0]);
            for (final String part : parts) {
                final int b = Integer.parseInt(part);
                if (b < 0 || b > 255) {
                    return false;
                }
            }
            return first >= 224 && first <= 239;
        } catch (final NumberFormatException ex) {
            return false;
        }
    }

    private static void checkHostPort(final AeronMedium medium, final String key, final String value) {
        final int colon = value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1) {
            throw bad(medium, key, value, "use host:port, e.g. 127.0.0.1:40456");
        }
        final int port;
        try {
            port = Integer.parseInt(value.substring(colon + 1));
        } catch (final NumberFormatException ex) {
            throw bad(medium, key, value, "the port must be a number, e.g. 127.0.0.1:40456");
        }
        if (port < 1 || port > 65535) {
            throw bad(medium, key, value, "the port must be 1..65535");
        }
    }

    private static int parseInt(final AeronMedium medium, final String key, final String value) {
        try {
            return Integer.decode(value.trim());
        } catch (final NumberFormatException ex) {
            throw bad(medium, key, value, "expected an integer");
        }
    }

    private static String blankToNull(final String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }

    private static BusConfigurationException bad(final AeronMedium medium, final String key, final String value, final String hint) {
        return new BusConfigurationException(medium.factoryName() + " property '" + key + "' = '" + value + "' is invalid: " + hint);
    }
}
