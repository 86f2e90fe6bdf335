package io.rdmabus;

import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * Idle strategies by name, for configuration. The default, {@code backoff}, spins briefly, then yields, then parks
 * up to 1 ms: it leaves cores to others when idle (on a 2-core machine several busy-spinning agents starve each
 * other). {@code busy-spin} is for dedicated, isolated cores only.
 */
public final class IdleStrategies {
    /** The name of the strategy that spins without ever yielding its CPU. */
    public static final String BUSY_SPIN = "busy-spin";
    /** The names {@link #supplier} accepts. */
    public static final String NAMES = BUSY_SPIN + ", yielding, backoff, sleeping";
    /** {@code backoff}: empty duty cycles that spin before it yields. */
    public static final int BACKOFF_MAX_SPINS = 10;
    /** {@code backoff}: empty duty cycles that yield after the spins, before it parks (1 us, doubling up to 1 ms). */
    public static final int BACKOFF_MAX_YIELDS = 20;

    private IdleStrategies() {
    }

    /**
     * @param name one of {@link #NAMES}
     * @return a supplier of fresh instances (one per agent; idle strategies hold state)
     * @throws BusConfigurationException for an unknown name
     */
    public static Supplier<IdleStrategy> supplier(final String name) {
        return switch (name == null ? "" : name) {
            case BUSY_SPIN -> BusySpinIdleStrategy::new;
            case "yielding" -> YieldingIdleStrategy::new;
            case "backoff" -> () -> new BackoffIdleStrategy(BACKOFF_MAX_SPINS, BACKOFF_MAX_YIELDS,
                TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(1));
            case "sleeping" -> () -> new SleepingMillisIdleStrategy(1);
            default -> throw new BusConfigurationException("Unknown idle strategy '" + name + "': use one of " + NAMES);
        };
    }

    /**
     * @param strategy an agent's idle strategy
     * @return true if it never gives up its CPU to park or sleep ({@code busy-spin}, {@code yielding}, Agrona's no-op):
     *     a thread idling on it needs no wake-up, and keeps a core busy
     */
    public static boolean neverParks(final IdleStrategy strategy) {
        return strategy instanceof BusySpinIdleStrategy || strategy instanceof YieldingIdleStrategy
            || strategy instanceof NoOpIdleStrategy;
    }
}
