package io.rdmabus.tck.remote;

import java.util.List;
import java.util.Objects;

import io.rdmabus.Bus;

/**
 * A started bus and the endpoint other buses use as a seed to reach it (e.g. {@code "10.77.0.12:18800"}).
 *
 * @param bus      the bus
 * @param endpoint its listen endpoint in the transport's seed syntax
 */
public record BusNode(Bus bus, String endpoint) {
    /** Validates. */
    public BusNode {
        Objects.requireNonNull(bus, "bus");
        Objects.requireNonNull(endpoint, "endpoint");
    }

    /** Makes started buses of one transport configuration; used on both sides of a split TCK run. */
    @FunctionalInterface
    public interface Factory {
        /**
         * @param busName the bus name
         * @param seeds   the listen endpoints of every bus still open, on either side
         * @return a started bus that dials those seeds, and its own endpoint
         */
        BusNode newBus(String busName, List<String> seeds);
    }
}
