package io.rdmabus.spi;

/**
 * A transport's counter described as data, on the model of Aeron's {@code SystemCounterDescriptor}: a transport keeps
 * its counters in an enum that implements this interface, one constant per counter, each with its {@link Text}. The id
 * is the constant's ordinal, which is the counter's index in its owner's value array. The names are what
 * {@link Transport#counters()} and {@code ConnectionStats.counters()} report, what the bus's counters file and
 * {@code rdma-bus stats} show, and what tests and soak checks read: a name, once published, is kept.
 */
public interface CounterDescriptor {
    /**
     * What one counter is.
     *
     * @param name        its name in the transport's counters
     * @param writer      the thread that writes it ("any": several threads, atomically)
     * @param description what it counts
     */
    record Text(String name, String writer, String description) {
        /** Checks that no part is blank, so a counter cannot be added without saying what it is. */
        public Text {
            requireText(name, "name", name);
            requireText(writer, "writer", name);
            requireText(description, "description", name);
        }

        private static void requireText(final String value, final String part, final String counter) {
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException("counter " + counter + ": no " + part);
            }
        }
    }

    /** @return what this counter is */
    Text text();

    /** @return the enum constant's ordinal (implemented by every enum) */
    int ordinal();

    /** @return the counter's id: the index in its owner's value array */
    default int id() {
        return ordinal();
    }

    /** @return its name in the transport's counters */
    default String counterName() {
        return text().name();
    }

    /** @return the thread that writes it */
    default String writer() {
        return text().writer();
    }

    /** @return what it counts */
    default String description() {
        return text().description();
    }
}
