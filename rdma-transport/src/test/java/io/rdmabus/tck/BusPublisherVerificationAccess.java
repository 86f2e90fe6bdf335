package io.rdmabus.tck;

import java.util.function.Supplier;

import io.rdmabus.Bus;

import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * Test-only access to the package-private {@link BusPublisherVerification}, so a lab diagnostic can run the RS TCK's
 * own scenario (the very {@code createPublisher} the TCK uses) with its own measurements around it.
 */
public final class BusPublisherVerificationAccess {
    private BusPublisherVerificationAccess() {
    }

    /**
     * @param env             timeouts
     * @param gcTimeoutMillis the rule 3.13 wait before its GC
     * @param publisherBus    publishes the elements
     * @param subscriberBus   the bus whose subscribe Flux is verified
     * @param closedBus       makes a closed bus (rule 1.9)
     * @param topicPrefix     makes topic names unique
     * @return the verification {@link TransportTck} runs
     */
    public static PublisherVerification<String> verification(final TestEnvironment env, final long gcTimeoutMillis, final Bus publisherBus,
                                                             final Bus subscriberBus, final Supplier<Bus> closedBus, final String topicPrefix) {
        return new BusPublisherVerification(env, gcTimeoutMillis, publisherBus, subscriberBus, closedBus, topicPrefix);
    }
}
