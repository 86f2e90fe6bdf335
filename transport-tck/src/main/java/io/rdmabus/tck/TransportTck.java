package io.rdmabus.tck;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * The transport compatibility kit: one JUnit 5 suite every transport configuration runs against real buses.
 *
 * <p>Usage, in a transport's test sources:
 * <pre>{@code
 * class TcpTckTest extends TransportTck {
 *     @Override
 *     protected TckFixture createFixture() {
 *         return new TcpFixture();
 *     }
 * }
 * }</pre>
 *
 * <p>The cases are inherited, one class per theme, each extending the one before: {@link HostileFrameTck} (malformed
 * headers and payloads, forged sequence numbers), {@link DeliveryTck} (one to one, many topics, fan-out, messages
 * larger than a frame), {@link FlowControlTck} (a slow RELIABLE subscriber, BEST_EFFORT overload under each policy) and
 * {@link LifecycleTck} (restarts, close, the reactive-streams publisher rules); {@link TckBase} holds the lifecycle and
 * the helpers they share.
 *
 * <p>Lifecycle: one fixture per test class ({@link TestInstance.Lifecycle#PER_CLASS}), created in {@link BeforeAll} and
 * closed in {@link AfterAll}, because fixtures may hold expensive shared parts (an embedded media driver). Isolation
 * between cases comes from fresh buses (unique names) and fresh topics (unique names) in every case; every bus a case
 * opens is closed after it. Every case is bounded by {@link ScaledTimeout} (times {@link TckFixture#timeFactor()}); the
 * whole suite takes well under two minutes on two cores.
 *
 * <p>Conventions: payloads are strings ({@code Codecs.utf8()}) or bytes ({@code Codecs.bytes()}). "Probes" are
 * messages published until every subscriber has seen one, so a case starts only when the path is known to be
 * connected end to end (a connected publication means at least one subscriber, not all of them).
 */
public abstract class TransportTck extends LifecycleTck {
    // every case is inherited: see the class comment
}
