package io.rdmabus.spi;

import java.util.List;
import java.util.Map;

/**
 * Discovery from a fixed seed list per transport, e.g. {@code tcp -> [host1:7700, host2:7700]}. Every node
 * connects to every seed it is given; a node that publishes a topic streams it to every connected subscriber.
 *
 * @param seeds endpoints per transport name
 */
public record StaticSeedDiscovery(Map<String, List<String>> seeds) implements Discovery {
    /** Copies the map so later changes by the caller do not leak in. */
    public StaticSeedDiscovery {
        seeds = Map.copyOf(seeds);
    }

    /** @return discovery with no seeds (transports that derive everything from topic names) */
    public static StaticSeedDiscovery none() {
        return new StaticSeedDiscovery(Map.of());
    }

    @Override
    public List<String> endpoints(final String transport) {
        return seeds.getOrDefault(transport, List.of());
    }
}
