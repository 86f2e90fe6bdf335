package io.rdmabus.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * CPU time and context switches of this process's threads whose name starts with a prefix, from Linux's
 * {@code /proc/self/task/<tid>/}: {@code stat} (user + system time, in clock ticks) and {@code status} (voluntary
 * context switches: how often a thread went to sleep and was woken). For how often a bus's threads wake and what they
 * cost a benchmark phase (the thread's name as the kernel keeps it, its first 15 characters).
 *
 * @param ticks    user + system clock ticks (usually 100 a second), summed over the matched threads
 * @param switches voluntary context switches, summed
 * @param threads  threads matched
 */
record ThreadTimes(long ticks, long switches, int threads) {
    /** Clock ticks per second of {@code stat}'s times (USER_HZ, 100 on Linux's common configurations). */
    static final int TICKS_PER_S = 100;

    /**
     * @param prefix the start of the threads' kernel names ({@code comm})
     * @return the sums over the matched threads now; all 0 where {@code /proc} is not there
     */
    static ThreadTimes take(final String prefix) {
        ThreadTimes sum = new ThreadTimes(0, 0, 0);
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (final Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    if (Files.readString(task.resolve("comm")).strip().startsWith(prefix)) {
                        sum = sum.plus(of(task));
                    }
                } catch (final IOException | RuntimeException gone) {
                    // the thread ended while we read it
                }
            }
        } catch (final IOException ex) {
            return new ThreadTimes(0, 0, 0);
        }
        return sum;
    }

    /** @return the calling thread's figures now; all 0 where {@code /proc} is not there */
    static ThreadTimes self() {
        try {
            return of(Path.of("/proc/thread-self"));
        } catch (final IOException | RuntimeException ex) {
            return new ThreadTimes(0, 0, 0);
        }
    }

    private static ThreadTimes of(final Path task) throws IOException {
        final String stat = Files.readString(task.resolve("stat"));
        // the fields after the ")" that ends the name, from field 3 (state) on: utime is field 14, stime 15
        final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long switches = 0;
        for (final String line : Files.readAllLines(task.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
                switches = Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
            }
        }
        return new ThreadTimes(Long.parseLong(fields[11]) + Long.parseLong(fields[12]), switches, 1);
    }

    private ThreadTimes plus(final ThreadTimes other) {
        return new ThreadTimes(ticks + other.ticks, switches + other.switches, threads + other.threads);
    }

    /**
     * @param before  the earlier snapshot
     * @param seconds the time between the two
     * @return "cpu N ms/s, N wakes/s (N threads)" of the time between {@code before} and this
     */
    String describeSince(final ThreadTimes before, final double seconds) {
        return String.format("cpu %.0f ms/s, %.0f wakes/s (%d threads)", (ticks - before.ticks) * 1000.0 / TICKS_PER_S / seconds,
            (switches - before.switches) / seconds, threads);
    }
}
