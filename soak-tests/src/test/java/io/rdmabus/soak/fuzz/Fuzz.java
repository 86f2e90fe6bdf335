package io.rdmabus.soak.fuzz;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Seeded fuzzing support: one seed per test run (from {@code -Dfuzz.seed}, else fresh), a time budget per fuzz
 * test ({@code -Dfuzz.budget.ms}, default 6000), and a failure message that names the seed and iteration so a
 * failing case is reproduced by running the same test with {@code -Dfuzz.seed=<seed>}.
 */
public final class Fuzz {
    private static final long DEFAULT_BUDGET_MS = 6000;

    /** The run's seed. */
    public final long seed;
    private final long deadlineNs;
    private final String name;
    private long iteration;

    private Fuzz(final String name, final long seed, final long budgetMs) {
        this.name = name;
        this.seed = seed;
        this.deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(budgetMs);
    }

    /**
     * @param name the fuzz target, for messages
     * @return a fuzz session with the configured seed and budget; prints the seed
     */
    public static Fuzz start(final String name) {
        final String configured = System.getProperty("fuzz.seed", "");
        final long seed = configured.isBlank() ? System.nanoTime() ^ Double.doubleToLongBits(Math.random()) : Long.parseLong(configured.trim());
        final String budget = System.getProperty("fuzz.budget.ms", "");
        final long budgetMs = budget.isBlank() ? DEFAULT_BUDGET_MS : Long.parseLong(budget.trim());
        System.out.println("fuzz " + name + ": seed=" + seed + " budgetMs=" + budgetMs + " (reproduce with -Dfuzz.seed=" + seed + ")");
        return new Fuzz(name, seed, budgetMs);
    }

    /** @return a generator for iteration {@link #iteration()}, derived from the seed so any single case replays */
    public SplittableRandom nextCase() {
        iteration++;
        return new SplittableRandom(seed * 0x9E3779B97F4A7C15L + iteration);
    }

    /** @return true while the time budget lasts (always at least one case) */
    public boolean more() {
        return iteration == 0 || System.nanoTime() < deadlineNs;
    }

    /** @return the current iteration, from 1 */
    public long iteration() {
        return iteration;
    }

    /**
     * @param what what went wrong
     * @return a message naming the target, seed and iteration
     */
    public String fail(final String what) {
        return name + " seed=" + seed + " iteration=" + iteration + ": " + what + " (reproduce with -Dfuzz.seed=" + seed + ")";
    }

    /** @param cases how many cases ran @return a summary line */
    public String summary(final String cases) {
        return "fuzz " + name + ": seed=" + seed + " iterations=" + iteration + " " + cases;
    }

    /**
     * Random bytes with a bias towards the values parsers get wrong: 0, 0xFF, 0x80, small counts.
     *
     * @param rnd    generator
     * @param length how many
     * @return the bytes
     */
    public static byte[] bytes(final SplittableRandom rnd, final int length) {
        final byte[] out = new byte[length];
        for (int i = 0; i < length; i++) {
            out[i] = interestingByte(rnd);
        }
        return out;
    }

    /** @param rnd generator @return a byte, often a boundary value */
    public static byte interestingByte(final SplittableRandom rnd) {
        return switch (rnd.nextInt(8)) {
            case 0 -> 0;
            case 1 -> (byte) 0xFF;
            case 2 -> (byte) 0x80;
            case 3 -> (byte) rnd.nextInt(8);
            default -> (byte) rnd.nextInt(256);
        };
    }

    /** @param rnd generator @return an int, often a boundary value */
    public static int interestingInt(final SplittableRandom rnd) {
        return switch (rnd.nextInt(10)) {
            case 0 -> 0;
            case 1 -> -1;
            case 2 -> Integer.MAX_VALUE;
            case 3 -> Integer.MIN_VALUE;
            case 4 -> rnd.nextInt(64);
            case 5 -> -rnd.nextInt(64);
            case 6 -> 1 << rnd.nextInt(31);
            default -> rnd.nextInt();
        };
    }

    /**
     * Mutates {@code frame} in place: bit flips, byte sets, interesting ints at random offsets.
     *
     * @param rnd   generator
     * @param frame bytes to mutate
     * @param count how many mutations
     */
    public static void mutate(final SplittableRandom rnd, final byte[] frame, final int count) {
        if (frame.length == 0) {
            return;
        }
        for (int m = 0; m < count; m++) {
            final int at = rnd.nextInt(frame.length);
            switch (rnd.nextInt(3)) {
                case 0 -> frame[at] ^= (byte) (1 << rnd.nextInt(8));
                case 1 -> frame[at] = interestingByte(rnd);
                default -> {
                    final int v = interestingInt(rnd);
                    for (int k = 0; k < 4 && at + k < frame.length; k++) {
                        frame[at + k] = (byte) (v >>> (8 * k));
                    }
                }
            }
        }
    }
}
