package io.rdmabus.tck.remote;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.rdmabus.Bus;
import io.rdmabus.BusPublication;
import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;
import io.rdmabus.Topic;
import io.rdmabus.codecs.Codecs;
import io.rdmabus.spi.Transport;
import io.rdmabus.tck.TckFixture;

import reactor.core.Disposable;

/**
 * A TCK fixture whose buses live in two processes (possibly on two hosts): this JVM (local buses) and a {@link BusHost}
 * (remote buses, reached through {@link RemoteBus} proxies). Every new bus, on either side, gets the listen endpoints
 * of every bus still open on both sides as seeds, so a case with a local and a remote bus moves its data across the
 * two processes on the transport under test; the proxy's TCP connection carries only the API calls and the values
 * handed to or by the remote bus.
 *
 * <p>Placement, per case ({@link #beforeCase}): the case's buses alternate between the two sides in the order the case
 * creates them, starting local, or remote for the cases in {@code FIRST_SIDE}, so each case always has the same
 * topology. Starting local puts the publisher of most cases here and its subscriber there: the remote subscriber's values
 * stream back, whereas every {@code offer} on a remote publication is a round trip (5-15 ms between two emulated lab
 * guests, too slow for the cases that offer thousands of values against a deadline). Remote publishers still run in
 * the reactive-streams rules and the slow-subscriber case ({@code publish}) and
 * {@code publisherRestartIsPickedUpBySubscriber} ({@code offer}).
 * Fixed exceptions, because a check of the case only looks at this JVM: the bus of
 * {@code closeReleasesEverything} (role {@code close}) is local, since the case looks for its threads here; its peer
 * (role {@code other}) is remote. The restarted publisher of {@code publisherRestartIsPickedUpBySubscriber} (role
 * {@code pub2}) goes to the other side than the subscriber. {@link #newRawTransport()} is local, with every open bus as
 * seed, so injected frames cross to a remote subscriber too. Each placement is printed.
 */
public abstract class SplitTckFixture implements TckFixture {
    /** Where a bus lives. */
    public enum Side {
        /** In this JVM. */
        LOCAL,
        /** In the bus host. */
        REMOTE;

        Side other() {
            return this == LOCAL ? REMOTE : LOCAL;
        }
    }

    /**
     * Cases whose first bus is remote (every other case starts local). The malformed-frames case has one bus, the
     * subscriber: remote, so the frames the local raw transport injects cross the two processes. The reactive-streams
     * rules: the publisher bus is remote and the subscriber bus local, so the rules verify a real bus's {@code Flux} (not
     * the proxy's) and the remote side publishes. The slow-subscriber case: its subscriber requests one value at a time,
     * which through a remote subscriber's proxy is one round trip per value (REQUEST(1) out, the 64 KiB value back: in
     * the two-guest run 360 of 512 in 40 s, where one guest takes 11 s for all); with the publisher remote
     * ({@code publish}, whose bus requests values in batches of 32) and the subscriber local, its one-at-a-time demand
     * stays in this JVM and the data still crosses on the transport.
     */
    private static final Map<String, Side> FIRST_SIDE = Map.of("malformedFramesAreDroppedAndCounted", Side.REMOTE,
        "reactiveStreamsPublisherRules", Side.REMOTE, "reliableSlowSubscriberBackPressuresThePublisherWithoutLoss", Side.REMOTE);

    private static final Pattern TCK_NAME = Pattern.compile("tck-(.+)-[0-9a-f]+-[0-9]+");

    private final RemoteBusClient remote;
    private final List<Open> open = new ArrayList<>();
    private final AtomicInteger local = new AtomicInteger();
    private final AtomicInteger remoteCount = new AtomicInteger();
    private String currentCase = "(before the first case)";
    private Side next = Side.LOCAL;
    private Side firstOfCase = Side.LOCAL;

    private record Open(String endpoint, BooleanSupplier closed) {
    }

    /** @param remote the connected bus host client; the fixture shuts it down in {@link #close()} */
    protected SplitTckFixture(final RemoteBusClient remote) {
        this.remote = remote;
    }

    /**
     * @param busName the bus name
     * @param seeds   endpoints of every open bus on both sides
     * @return a started local bus and its endpoint
     */
    protected abstract BusNode newLocalBus(String busName, List<String> seeds);

    /**
     * @param bus a local bus made by {@link #newLocalBus}
     * @return whether its transport is closed (its endpoint is then dropped from the seeds)
     */
    protected abstract boolean isLocalClosed(Bus bus);

    /**
     * @param seeds endpoints of every open bus on both sides
     * @return a started raw local transport that dials them
     */
    protected abstract Transport newLocalRawTransport(List<String> seeds);

    /** Closes what the local side owns (transports not yet closed). */
    protected abstract void closeLocal();

    @Override
    public synchronized void beforeCase(final String caseName) {
        currentCase = caseName;
        // a fixed, name-derived start side: the same case always gets the same topology, whatever runs before it
        firstOfCase = FIRST_SIDE.getOrDefault(caseName, Side.LOCAL);
        next = firstOfCase;
    }

    /** @return the side the next bus goes to, given its TCK role (see the class comment) */
    private Side place(final String busName) {
        final Matcher m = TCK_NAME.matcher(busName);
        final String role = m.matches() ? m.group(1) : "";
        final Side side = switch (role) {
            case "close" -> Side.LOCAL;
            case "other" -> Side.REMOTE;
            case "pub2" -> firstOfCase.other(); // its subscriber is the case's first bus
            default -> next;
        };
        next = side.other();
        return side;
    }

    private synchronized List<String> seeds() {
        open.removeIf(o -> o.closed().getAsBoolean());
        final List<String> seeds = new ArrayList<>();
        for (final Open o : open) {
            seeds.add(o.endpoint());
        }
        return seeds;
    }

    @Override
    public Bus newBus(final String busName) {
        final Side side;
        synchronized (this) {
            side = place(busName);
        }
        return newBus(busName, side);
    }

    /**
     * @param busName the bus name
     * @param side    where
     * @return a started bus on that side, registered as a seed for later buses
     */
    protected final Bus newBus(final String busName, final Side side) {
        final List<String> seeds = seeds();
        final long t0 = System.nanoTime();
        final BusNode node;
        final BooleanSupplier closed;
        if (side == Side.LOCAL) {
            node = newLocalBus(busName, seeds);
            closed = () -> isLocalClosed(node.bus());
            local.incrementAndGet();
        } else {
            node = remote.newBus(busName, seeds);
            closed = ((RemoteBus) node.bus())::isClosed;
            remoteCount.incrementAndGet();
        }
        synchronized (this) {
            open.add(new Open(node.endpoint(), closed));
            System.err.println("split fixture [" + currentCase + "]: " + busName + " " + side + " on " + node.endpoint() + " ("
                + seeds.size() + " seeds, " + (System.nanoTime() - t0) / 1_000_000 + " ms)");
        }
        return node.bus();
    }

    @Override
    public Transport newRawTransport() {
        return newLocalRawTransport(seeds());
    }

    /**
     * Pays JIT and class loading on both sides and the first cross-process connections before the first case: a local
     * and a remote bus exchange {@code messages} values each way, reliable and best effort. Fails if nothing crosses.
     *
     * @param messages values per direction and delivery
     * @param bound    how long each direction and delivery may take
     */
    protected final void warmUp(final int messages, final Duration bound) {
        final long t0 = System.nanoTime();
        final Bus a = newBus("warmup-split-local", Side.LOCAL);
        final Bus b = newBus("warmup-split-remote", Side.REMOTE);
        final StringBuilder failures = new StringBuilder();
        try {
            for (final Delivery delivery : Delivery.values()) {
                for (final Bus[] pair : new Bus[][] {{a, b}, {b, a}}) {
                    final String direction = (pair[0] == a ? "local->remote " : "remote->local ") + delivery;
                    final Topic<String> topic = Topic.of("warmup-split-" + (pair[0] == a ? "lr-" : "rl-") + delivery.name().toLowerCase(Locale.ROOT),
                        Codecs.utf8(), delivery);
                    final AtomicInteger received = new AtomicInteger();
                    final Disposable sub = pair[1].subscribe(topic).subscribe(v -> received.incrementAndGet());
                    final int sent;
                    try (BusPublication<String> pub = pair[0].publication(topic)) {
                        sent = pump(pub, received, messages, bound);
                    } finally {
                        sub.dispose();
                    }
                    System.err.println("split fixture warm-up " + direction + ": " + received.get() + "/" + sent + " after "
                        + (System.nanoTime() - t0) / 1_000_000 + " ms");
                    if (received.get() == 0) {
                        failures.append(direction).append(": nothing arrived in ").append(bound).append("; ");
                    }
                }
            }
        } finally {
            b.close();
            a.close();
        }
        if (!failures.isEmpty()) {
            throw new AssertionError("split fixture warm-up: nothing crosses between this JVM and " + remote + ": " + failures);
        }
    }

    private static int pump(final BusPublication<String> pub, final AtomicInteger received, final int messages, final Duration bound) {
        final long deadlineNs = System.nanoTime() + bound.toNanos();
        int sent = 0;
        int last = 0;
        long lastProgressNs = System.nanoTime();
        while (received.get() < messages && System.nanoTime() < deadlineNs) {
            if (received.get() != last) {
                last = received.get();
                lastProgressNs = System.nanoTime();
            }
            if (sent >= messages + 50 && System.nanoTime() - lastProgressNs > TimeUnit.SECONDS.toNanos(5)) {
                break; // best effort lost some: what arrived is warm-up enough
            }
            if (sent < messages + 50 && pub.offer("w" + sent) == PublishStatus.OK) {
                sent++;
            } else {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
        }
        return sent;
    }

    /** @return how many buses were created on each side so far */
    public final Map<Side, Integer> created() {
        return Map.of(Side.LOCAL, local.get(), Side.REMOTE, remoteCount.get());
    }

    /**
     * Closes the local side, then ends the host's session (it closes its buses and checks their threads).
     *
     * @throws IllegalStateException if the host found threads of a closed remote bus still alive
     */
    @Override
    public void close() {
        System.err.println("split fixture: buses created " + created());
        try {
            closeLocal();
        } finally {
            remote.close();
        }
    }
}
