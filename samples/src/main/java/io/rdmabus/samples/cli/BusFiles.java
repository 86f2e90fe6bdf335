package io.rdmabus.samples.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.rdmabus.counters.CountersFile;
import io.rdmabus.counters.CountersFileReader;

import picocli.CommandLine.Option;

/** Finds the counters files of the buses on this host, for {@code stats} and {@code errors}. */
final class BusFiles {
    @Option(names = "--dir", paramLabel = "DIR",
        description = "counters directory to read (repeatable); default: every rdma-bus-* directory under /dev/shm and java.io.tmpdir")
    List<Path> dirs = new ArrayList<>();

    BusFiles() {
    }

    /** @return the directories looked in */
    List<Path> directories() {
        return dirs.isEmpty() ? CountersFile.defaultDirectories() : dirs;
    }

    /**
     * Opens every readable counters file, skipping those whose bus is still creating them or that vanished meanwhile.
     *
     * @param busName only this bus, or null for all
     * @return file to reader, in file name order; the caller closes them
     */
    Map<Path, CountersFileReader> open(final String busName) {
        final Map<Path, CountersFileReader> readers = new LinkedHashMap<>();
        for (final Path file : CountersFile.list(directories())) {
            final CountersFileReader reader;
            try {
                reader = CountersFileReader.open(file);
            } catch (final IOException | IllegalStateException ex) {
                continue; // closed between the listing and the open, not ours to read, or still being created
            }
            if (busName == null || busName.equals(reader.busName())) {
                readers.put(file, reader);
            } else {
                reader.close();
            }
        }
        return readers;
    }

    /** @param busName a bus's name or null @return what was looked for and where, for a "not found" message */
    String notFound(final String busName) {
        return (busName == null ? "no bus" : "no bus named '" + busName + "'") + " on this host (looked in "
            + (directories().isEmpty() ? "/dev/shm/rdma-bus-* and " + System.getProperty("java.io.tmpdir") + "/rdma-bus-*, none exists"
            : directories()) + ")";
    }
}
