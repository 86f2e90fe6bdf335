package io.rdmabus.rdma.transport;

import io.rdmabus.BusConfigurationException;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * How a transport finds its peers ({@code rdma.discovery*}, parsed with the other {@code rdma.*} properties by
 * {@link RdmaTransportConfig}; see {@code docs/rdma-transport.md}, "Discovery").
 *
 * <ul>
 *   <li>{@code seeds} (default): only the static seed list ({@code TransportContext.discovery().endpoints("rdma")}).</li>
 *   <li>{@code multicast}: in addition, every node multicasts an ADVERT (its node id, rdma_cm listen endpoint and the
 *   topics it publishes) on the bus's control group every {@code rdma.discovery.interval.ms}, and a node with a local
 *   subscription to an advertised topic dials the advertiser (same dial path as seeds). Needs the UD endpoint
 *   ({@code rdma.ud.mode} unicast or multicast). Seeds keep working alongside.</li>
 * </ul>
 *
 * @param mode       seeds only, or seeds plus the UD control group
 * @param intervalMs how often a node advertises; advertisers not heard for {@link #EXPIRY_INTERVALS} intervals are forgotten
 * @param group      the control group as a big-endian IPv4 int, or 0: derived from {@code rdma.domain} inside
 *                   {@code rdma.ud.groups} ({@link UdConfig#discoveryGroup()})
 */
public record DiscoveryConfig(Mode mode, long intervalMs, int group) {
    /** {@code seeds} (default) or {@code multicast}. */
    public static final String MODE = "rdma.discovery";
    /** Advert interval in milliseconds (default 1000, 100..60000). */
    public static final String INTERVAL_MS = "rdma.discovery.interval.ms";
    /** The control multicast group (IPv4); empty (default) = derived from {@code rdma.domain} inside {@code rdma.ud.groups}. */
    public static final String GROUP = "rdma.discovery.group";
    /** An advertiser not heard for this many intervals is forgotten: no more dials to it (a live connection stays). */
    public static final int EXPIRY_INTERVALS = 5;
    static final long MIN_INTERVAL_MS = 100;
    static final long MAX_INTERVAL_MS = 60_000;

    /** How peers are found. */
    public enum Mode {
        /** The static seed list only. */
        SEEDS,
        /** The static seed list plus adverts on the UD control multicast group. */
        MULTICAST
    }

    /** Validates ranges. */
    public DiscoveryConfig {
        if (mode == null) {
            throw new BusConfigurationException("Missing value for " + MODE + ": expected seeds or multicast");
        }
        if (intervalMs < MIN_INTERVAL_MS || intervalMs > MAX_INTERVAL_MS) {
            throw new BusConfigurationException("Bad value '" + intervalMs + "' for " + INTERVAL_MS + ": expected " + MIN_INTERVAL_MS + ".."
                    + MAX_INTERVAL_MS + " (milliseconds between two adverts of a node)");
        }
        if (group != 0 && (group >>> 28) != 0xE) {
            throw new BusConfigurationException("Bad value '" + UdConfig.ipv4Text(group) + "' for " + GROUP
                    + ": expected an IPv4 multicast address (224.0.0.0/4), e.g. 239.192.255.1, or leave it empty to derive it from " + UdConfig.DOMAIN);
        }
    }

    /** @return true if adverts go out and are listened to on the control group */
    public boolean multicast() {
        return mode == Mode.MULTICAST;
    }

    /**
     * @param ud the UD settings (domain and group range)
     * @return the control group every node of the bus uses: {@link #group()} if set, else derived from the bus identity
     */
    int controlGroup(final UdConfig ud) {
        return group != 0 ? group : ud.discoveryGroup();
    }

    /** @return the keys with their defaults */
    static Map<String, String> defaults() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(MODE, "seeds");
        m.put(INTERVAL_MS, "1000");
        m.put(GROUP, "");
        return m;
    }

    /** Parses the discovery keys of {@code properties} (other keys are ignored here). */
    static DiscoveryConfig parse(final Map<String, String> properties) {
        Map<String, String> d = defaults();
        String modeText = properties.getOrDefault(MODE, d.get(MODE)).trim().toLowerCase(Locale.ROOT);
        Mode mode = switch (modeText) {
            case "seeds" -> Mode.SEEDS;
            case "multicast" -> Mode.MULTICAST;
            default -> throw new BusConfigurationException("Bad value '" + modeText + "' for " + MODE
                    + ": expected seeds (the static seed list only) or multicast (adverts on the UD control group, plus seeds)");
        };
        String interval = properties.getOrDefault(INTERVAL_MS, d.get(INTERVAL_MS)).trim();
        long intervalMs;
        try {
            intervalMs = Long.parseLong(interval);
        } catch (NumberFormatException e) {
            throw new BusConfigurationException("Bad value '" + interval + "' for " + INTERVAL_MS + ": expected an integer " + MIN_INTERVAL_MS + ".."
                    + MAX_INTERVAL_MS + " (milliseconds)");
        }
        String groupText = properties.getOrDefault(GROUP, d.get(GROUP)).trim();
        int group = 0;
        if (!groupText.isEmpty()) {
            try {
                group = UdConfig.ipv4(groupText);
            } catch (NumberFormatException e) {
                throw new BusConfigurationException("Bad value '" + groupText + "' for " + GROUP
                        + ": expected an IPv4 multicast address such as 239.192.255.1, or leave it empty to derive it from " + UdConfig.DOMAIN);
            }
            if ((group >>> 28) != 0xE) {
                throw new BusConfigurationException("Bad value '" + groupText + "' for " + GROUP
                        + ": expected an IPv4 multicast address (224.0.0.0/4), e.g. 239.192.255.1, or leave it empty to derive it from "
                        + UdConfig.DOMAIN);
            }
        }
        return new DiscoveryConfig(mode, intervalMs, group);
    }
}
