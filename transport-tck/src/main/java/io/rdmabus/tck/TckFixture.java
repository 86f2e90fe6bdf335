package io.rdmabus.tck;

import java.util.Map;

import io.rdmabus.Bus;
import io.rdmabus.spi.Transport;

/**
 * How the transport TCK gets buses of one transport configuration. Each transport's test module implements one
 * fixture per configuration (e.g. Aeron UDP unicast, Aeron UDP multicast, Aeron IPC, TCP) and runs the suite with it.
 */
public interface TckFixture extends AutoCloseable {
    /** @return a short description, e.g. {@code "aeron-udp multicast on loopback"} */
    String name();

    /**
     * Creates a started bus, a distinct node that reaches every bus this fixture created before or after it
     * (for seed-list transports: the fixture passes the earlier nodes' addresses as seeds).
     *
     * @param busName the bus name
     * @return a started bus; the test closes it
     */
    Bus newBus(String busName);

    /**
     * @return a started raw transport that reaches the same buses, used to inject malformed frames through
     *     {@code addPublication(...).tryClaim(...)}; the test closes it
     */
    Transport newRawTransport();

    /** @return the largest best-effort frame of this transport, header included */
    int maxBestEffortFrameLength();

    /**
     * An upper bound on how many bytes of one reliable stream the transport may hold between a publisher and a
     * stalled subscriber (send buffers, term buffers, socket buffers, receive buffers), used by the backpressure case:
     * it publishes four times this much to a slow subscriber and checks that the publisher was held back to within this
     * bound. Override if the transport is configured with larger buffers.
     *
     * @return bytes, default 64 MiB
     */
    default long maxBufferedReliableBytes() {
        return 64L * 1024 * 1024;
    }

    /**
     * A factor on the kit's time bounds: each case's overall bound and the bounds inside it (connect, delivery, publish,
     * "nothing arrived for 5 s") are multiplied by it. For a bed that is legitimately slower than one process on one
     * machine, such as buses split between two emulated guests on an oversubscribed host, where the same data crosses a
     * virtual network and each side gets a fraction of the CPU. Counts, order, loss and back-pressure checks are
     * unchanged; only how long the kit waits for them differs. Must be at least 1.
     *
     * @return the factor, default 1 (the kit's own bounds)
     */
    default double timeFactor() {
        return 1.0;
    }

    /**
     * Transport-specific check, called by the close case after {@code bus.close()} returned (and after the bus's
     * threads are gone): e.g. the bus's listening port is free again, its files or shared-memory logs are removed.
     * Throw an {@link AssertionError} to fail the case. Default: nothing to check beyond threads.
     *
     * @param busName the closed bus
     */
    default void assertTransportResourcesReleased(final String busName) {
    }

    /**
     * How long the reactive-streams TCK waits after a cancel before it runs the GC and expects the cancelled subscriber
     * to be collectable (rule 3.13; the RS TCK's {@code publisherReferenceGCTimeoutMillis}). Cancel is processed
     * asynchronously (the bus's delivery agent and the transport's poller drop their references on their next duty
     * cycle), so a bed where those threads get little CPU, such as a one-vCPU emulated guest, needs longer. The rule is
     * unchanged: the reference must be dropped; only the time allowed for it differs.
     *
     * @return milliseconds, default 1000
     */
    default long publisherReferenceGcTimeoutMillis() {
        return 1_000;
    }

    /**
     * Reactive-streams rules this configuration is known to fail, each with the reason and where it is tracked. A
     * listed rule still runs: if it passes it is reported as passed; if it fails it is reported as skipped (aborted)
     * with {@code KNOWN FAILURE}, the reason and the failure's message, never as passed, and the run prints it.
     * Only for a failure that is understood, tracked and documented; every other rule fails the run as usual.
     *
     * @return rule method name (e.g. {@code required_spec313_...}) to reason; default none
     */
    default Map<String, String> knownReactiveStreamsFailures() {
        return Map.of();
    }

    /**
     * Why this configuration still lets a back-pressured RELIABLE topic hold up another topic between the same two buses
     * (head-of-line blocking), with where it is tracked, or {@code null} if it does not. The case that checks it is then
     * reported as skipped (aborted) with this reason, never as passed.
     *
     * @return the documented reason, default {@code null}
     */
    default String knownHeadOfLineBlocking() {
        return null;
    }

    /**
     * Called before each case (test method or the reactive-streams factory) with its method name, e.g. so that a fixture
     * spreading buses over two processes gives every case the same placement whatever ran before. Default: nothing.
     *
     * @param caseName the test method's name
     */
    default void beforeCase(final String caseName) {
    }

    /** Releases what the fixture shares between buses (e.g. an embedded media driver). */
    @Override
    void close();
}
