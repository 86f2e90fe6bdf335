package io.rdmabus.samples.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.rdmabus.Bus;
import io.rdmabus.BusBuilder;
import io.rdmabus.spi.StaticSeedDiscovery;

import picocli.CommandLine.Option;

/** Transport selection shared by the commands. */
public final class TransportOptions {
    @Option(names = {"-t", "--transport"}, defaultValue = "auto",
        description = "transport: auto (RDMA if a device exists, else the best fallback), aeron-udp, aeron-ipc, tcp (default: ${DEFAULT-VALUE})")
    String transport;

    @Option(names = {"-p", "--property"}, paramLabel = "KEY=VALUE",
        description = "transport property for a bus talking to other processes, e.g. -p endpoint=127.0.0.1:40500 (aeron-udp) or "
            + "-p tcp.bind=127.0.0.1:7701 (tcp); repeatable")
    Map<String, String> properties = new LinkedHashMap<>();

    @Option(names = "--seed", paramLabel = "TRANSPORT=HOST:PORT",
        description = "peer to contact, e.g. --seed tcp=127.0.0.1:7701 or --seed aeron-udp=127.0.0.1:40456; repeatable")
    List<String> seeds = new ArrayList<>();

    @Option(names = "--idle", defaultValue = "backoff", description = "idle strategy: busy-spin, yielding, backoff, sleeping (default: ${DEFAULT-VALUE})")
    String idleStrategy;

    /** For picocli. */
    public TransportOptions() {
    }

    /** @return the transport name as given */
    public String transport() {
        return transport;
    }

    /** @return the idle strategy name */
    public String idleStrategy() {
        return idleStrategy;
    }

    /** @return true if the user gave properties or seeds, i.e. wants to talk to other processes */
    public boolean crossProcess() {
        return !properties.isEmpty() || !seeds.isEmpty();
    }

    /**
     * A bus for talking to other processes: the transport with the given properties and seeds.
     *
     * @param busName the bus's name
     * @return a started bus
     */
    public Bus buildBus(final String busName) {
        final BusBuilder builder = Bus.builder().name(busName).transport(transport).idleStrategy(idleStrategy);
        properties.forEach(builder::transportProperty);
        final Map<String, List<String>> seedMap = new LinkedHashMap<>();
        for (final String seed : seeds) {
            final int eq = seed.indexOf('=');
            if (eq <= 0 || eq == seed.length() - 1) {
                throw new IllegalArgumentException("--seed wants TRANSPORT=HOST:PORT, e.g. tcp=127.0.0.1:7701; got '" + seed + "'");
            }
            seedMap.computeIfAbsent(seed.substring(0, eq), k -> new ArrayList<>()).add(seed.substring(eq + 1));
        }
        if (!seedMap.isEmpty()) {
            builder.discovery(new StaticSeedDiscovery(seedMap));
        }
        return builder.build();
    }
}
