package io.rdmabus.samples.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Callable;

import io.rdmabus.counters.CountersFileReader;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** {@code rdma-bus errors NAME}: the distinct error log of a bus on this host (live or stale), from its counters file. */
@Command(name = "errors", mixinStandardHelpOptions = true, sortOptions = false,
    description = "The distinct errors a bus on this host recorded: count, first and last seen, message and stack trace.")
final class ErrorsCommand implements Callable<Integer> {
    @Parameters(arity = "1", paramLabel = "NAME", description = "the bus's name (rdma-bus stats lists them)")
    String busName;
    @Mixin
    BusFiles files;
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    ErrorsCommand() {
    }

    @Override
    public Integer call() {
        final PrintWriter out = spec.commandLine().getOut();
        final Map<Path, CountersFileReader> readers = files.open(busName);
        if (readers.isEmpty()) {
            spec.commandLine().getErr().println(files.notFound(busName));
            return CliSupport.EXIT_FAILED;
        }
        final long nowMs = System.currentTimeMillis();
        for (final Map.Entry<Path, CountersFileReader> e : readers.entrySet()) {
            try (CountersFileReader reader = e.getValue()) {
                final String stale = reader.staleReason(nowMs);
                out.printf("bus %s (pid %d, %s)%s, %s%n", reader.busName(), reader.pid(), reader.transportName(),
                    stale == null ? "" : " STALE, " + stale, e.getKey());
                final int distinct = reader.readErrors((count, firstMs, lastMs, text) -> {
                    out.printf("%n%,d observation(s), first %s, last %s%n%s", count, Instant.ofEpochMilli(firstMs),
                        Instant.ofEpochMilli(lastMs), text);
                });
                out.printf("%s%d distinct error(s)%n", distinct == 0 ? "" : "\n", distinct);
            }
        }
        out.flush();
        return 0;
    }
}
