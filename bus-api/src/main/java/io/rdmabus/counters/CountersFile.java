package io.rdmabus.counters;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.status.CountersReader;

/**
 * The layout of a bus's counters file, shared by the bus that writes it ({@link BusCounters}) and the readers in other
 * processes ({@link CountersFileReader}). One file per bus, {@code <dir>/<bus name>-<pid>.counters}, all in the host's
 * byte order:
 *
 * <pre>
 *   0 int   layout version (written last: 0 while the bus is still setting the file up)
 *   8 long  pid of the bus's process
 *  16 long  start time, epoch ms
 *  24 long  heartbeat, epoch ms: refreshed by the bus every {@link #UPDATE_INTERVAL_MS} ms with the counters
 *  32 int   counters capacity (n); 36 int error log length (e)
 *  40 int   bus name length, then the name (UTF-8, at most {@link #MAX_NAME_LENGTH} bytes)
 * 300 int   transport name length, then the name (UTF-8, at most 64 bytes)
 * HEADER_LENGTH: counters metadata (n x 512 bytes), then counter values (n x 128 bytes), then the distinct error log (e bytes)
 * </pre>
 *
 * The metadata and values are Agrona's {@link CountersReader} layout; each counter's type id is its scope kind
 * ({@link #KIND_BUS}...), its registration id the scope's id in the bus, its key the counter's name and its label
 * {@code "<scope label>: <name>"}. A connection's scope ({@link #KIND_CONNECTION}, label {@code "connection <peer>"}) is
 * there while its transport lists the connection: its counters are freed when it closes, and Agrona's counters manager
 * reuses a freed counter's slot only a second later. The error log is Agrona's {@link org.agrona.concurrent.errors.DistinctErrorLog}.
 */
public final class CountersFile {
    /** Bumped when the layout changes; a reader refuses another version. */
    public static final int LAYOUT_VERSION = 1;
    /** File name suffix. */
    public static final String SUFFIX = ".counters";
    /** The bus's counters, header and heartbeat are rewritten this often. */
    public static final long UPDATE_INTERVAL_MS = 100;
    /** A heartbeat older than this marks a file stale (its bus crashed or hangs). */
    public static final long STALE_AFTER_MS = 5_000;

    /** Scope kinds (counter type ids). */
    public static final int KIND_BUS = 1;
    /** The transport's own counters. */
    public static final int KIND_TRANSPORT = 2;
    /** One subscription. */
    public static final int KIND_SUBSCRIPTION = 3;
    /** One publication. */
    public static final int KIND_PUBLICATION = 4;
    /** One connection of the transport to a peer (its counters are the transport's, see {@code Transport.connections()}). */
    public static final int KIND_CONNECTION = 5;

    /** A bus's own counters (names as in {@link io.rdmabus.BusStats}, plus the live subscriptions and publications). */
    public static final List<String> BUS_COUNTERS = List.of("messagesPublished", "droppedNotConnected", "agentErrors", "subscriptions",
        "publications");
    /**
     * A subscription's counters: those of {@link io.rdmabus.SubscriptionStats} by their names, plus the payload bytes taken in
     * and the publisher sessions it forgot (more than it remembers had been seen: docs/wire-format.md, "Sequence rule").
     */
    public static final List<String> SUBSCRIPTION_COUNTERS = List.of("framesReceived", "bytesReceived", "messagesDelivered",
        "malformedFrames", "gapMessages", "droppedBySubscriber", "duplicates", "ringCapacity", "ringFree", "sessionsForgotten");
    /** A publication's counters: messages taken and their encoded bytes (without the frame headers). */
    public static final List<String> PUBLICATION_COUNTERS = List.of("messagesPublished", "bytesPublished");

    static final int VERSION_OFFSET = 0;
    static final int PID_OFFSET = 8;
    static final int START_TIME_OFFSET = 16;
    static final int HEARTBEAT_OFFSET = 24;
    static final int CAPACITY_OFFSET = 32;
    static final int ERROR_LOG_LENGTH_OFFSET = 36;
    static final int NAME_OFFSET = 40;
    static final int MAX_NAME_LENGTH = 256;
    static final int TRANSPORT_OFFSET = 300;
    static final int MAX_TRANSPORT_LENGTH = 64;
    static final int HEADER_LENGTH = 1024;

    static final int DEFAULT_CAPACITY = 4096;
    static final int DEFAULT_ERROR_LOG_LENGTH = 256 * 1024;

    private CountersFile() {
    }

    static int metadataOffset() {
        return HEADER_LENGTH;
    }

    static int valuesOffset(final int capacity) {
        return HEADER_LENGTH + capacity * CountersReader.METADATA_LENGTH;
    }

    static int errorLogOffset(final int capacity) {
        return valuesOffset(capacity) + capacity * CountersReader.COUNTER_LENGTH;
    }

    static int fileLength(final int capacity, final int errorLogLength) {
        return errorLogOffset(capacity) + errorLogLength;
    }

    /**
     * @return where buses put their files unless told otherwise: {@code /dev/shm/rdma-bus-<user>} when {@code /dev/shm}
     *     exists (memory, never written to disk), else {@code <java.io.tmpdir>/rdma-bus-<user>}; one directory per user, like
     *     Aeron's, so each user's buses can create files there and every user can read them
     */
    public static Path defaultDirectory() {
        return defaultRoot().resolve("rdma-bus-" + sanitize(System.getProperty("user.name", "user")));
    }

    private static Path defaultRoot() {
        final Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    /** @return every user's default directory on this host that exists: {@code rdma-bus-*} under /dev/shm and java.io.tmpdir */
    public static List<Path> defaultDirectories() {
        final List<Path> dirs = new ArrayList<>();
        for (final Path root : List.of(Path.of("/dev/shm"), Path.of(System.getProperty("java.io.tmpdir")))) {
            if (!Files.isDirectory(root)) {
                continue;
            }
            try (var entries = Files.newDirectoryStream(root, "rdma-bus-*")) {
                for (final Path dir : entries) {
                    if (Files.isDirectory(dir) && !dirs.contains(dir)) {
                        dirs.add(dir);
                    }
                }
            } catch (final java.io.IOException ignored) {
                // an unreadable root holds nothing we can show
            }
        }
        return dirs;
    }

    /**
     * @param dirs directories to look in
     * @return the counters files in them, sorted by name
     */
    public static List<Path> list(final List<Path> dirs) {
        final List<Path> files = new ArrayList<>();
        for (final Path dir : dirs) {
            try (var entries = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
                entries.forEach(files::add);
            } catch (final java.io.IOException ignored) {
                // a directory that vanished or that we may not read holds nothing we can show
            }
        }
        files.sort(null);
        return files;
    }

    /**
     * @param busName the bus's name
     * @param pid     its process id
     * @return the file name: the name with anything but letters, digits, '.', '_' and '-' replaced by '_', then the pid
     */
    public static String fileName(final String busName, final long pid) {
        return sanitize(busName) + "-" + pid + SUFFIX;
    }

    private static String sanitize(final String name) {
        return name.replaceAll("[^A-Za-z0-9._-]", "_");
    }
}
