package io.rdmabus.benchmarks;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import io.rdmabus.samples.cli.CliSupport;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * What one park of an idle agent costs the machine: the CPU the other threads lose to it. One counting thread per CPU
 * runs alone, then beside a thread that parks for {@code --park-us} in a loop, as an idle agent under {@code backoff}
 * does (1 us at first, up to 1 ms); the counting that the parking thread took away, spread over its parks, is the cost
 * of one park. On bare metal it is a few microseconds; where the timer and the wake-up go through a hypervisor it can
 * be tens, and then every idle agent's parks take a share of a core, and every hop that waits for a park's end pays it.
 */
@Command(name = "park-cost-probe", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Measures the CPU one LockSupport.parkNanos costs the other threads of the machine.")
public final class ParkCostProbe implements Callable<Integer> {
    @Option(names = "--seconds", defaultValue = "5", description = "seconds per phase (default: ${DEFAULT-VALUE})")
    int seconds;

    @Option(names = "--park-us", split = ",", defaultValue = "1,1000",
        description = "park lengths to measure, microseconds (default: ${DEFAULT-VALUE})")
    long[] parkMicros;

    @Option(names = "--counters", defaultValue = "-1",
        description = "counting threads (default: one per available processor)")
    int counters;

    private double[] parksPerSecond = new double[0];

    /** @return parks per second of the parking thread, one figure per {@code --park-us} of the last run */
    double[] parksPerSecond() {
        return parksPerSecond.clone();
    }

    public static void main(final String[] args) {
        System.exit(CliSupport.commandLine(new ParkCostProbe()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        final int threads = counters > 0 ? counters : Runtime.getRuntime().availableProcessors();
        if (seconds < 1 || parkMicros.length == 0 || java.util.Arrays.stream(parkMicros).anyMatch(us -> us < 1)) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--seconds and every --park-us must be positive");
        }
        count(threads, 1); // warm-up: the counting loop compiled before anything is measured
        parksPerSecond = new double[parkMicros.length];
        for (int p = 0; p < parkMicros.length; p++) {
            final long us = parkMicros[p];
            final double alone = count(threads, seconds); // again before each, so a drift of the machine shows in both
            final AtomicBoolean running = new AtomicBoolean(true);
            final long[] parks = new long[1];
            final Thread parker = Thread.ofPlatform().name("park-cost-parker").start(() -> {
                final long ns = TimeUnit.MICROSECONDS.toNanos(us);
                long n = 0;
                while (running.get()) {
                    LockSupport.parkNanos(ns);
                    n++;
                }
                parks[0] = n;
            });
            final double beside = count(threads, seconds);
            running.set(false);
            parker.join();
            parksPerSecond[p] = parks[0] / (double) seconds;
            final double lostCoreFraction = Math.max(0, (alone - beside) / alone) * threads;
            System.out.printf("parking %,d us: %,.0f parks/s (%.1f us each); %d counting threads %.1f M loops/s alone, %.1f beside it:"
                    + " %.1f%% of a core lost, %.1f us of CPU per park%n", us, parksPerSecond[p], 1e6 / parksPerSecond[p], threads,
                alone / 1e6, beside / 1e6,
                100 * lostCoreFraction, lostCoreFraction * 1e6 / parksPerSecond[p]);
        }
        return 0;
    }

    /** @return loops per second of {@code threads} counting threads together over {@code secs} seconds */
    private static double count(final int threads, final int secs) throws InterruptedException {
        final long[] loops = new long[threads];
        final long[] results = new long[threads]; // the counting's result, kept so the JIT cannot drop the loop
        final Thread[] counting = new Thread[threads];
        final long endNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(secs);
        for (int t = 0; t < threads; t++) {
            final int index = t;
            counting[t] = Thread.ofPlatform().name("park-cost-counter-" + t).start(() -> {
                long n = 0;
                long x = index + 1;
                while (System.nanoTime() < endNs) {
                    for (int i = 0; i < 1000; i++) {
                        x = x * 6364136223846793005L + 1442695040888963407L;
                    }
                    n++;
                }
                loops[index] = n;
                results[index] = x;
            });
        }
        long total = 0;
        for (int t = 0; t < threads; t++) {
            counting[t].join();
            total += loops[t];
        }
        return total / (double) secs;
    }
}
