package io.rdmabus.counters;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import io.rdmabus.BusConfigurationException;
import io.rdmabus.ConnectionStats;

import org.agrona.IoUtil;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.errors.DistinctErrorLog;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A bus's counters in a memory-mapped file ({@link CountersFile} has the layout) that other processes read with
 * {@link CountersFileReader}, like Aeron's counters file and AeronStat.
 *
 * <p>The hot path is untouched: the bus keeps counting in its own atomics, and this class's daemon thread copies them
 * into the file every {@link CountersFile#UPDATE_INTERVAL_MS} ms (each {@link Scope}'s sampler, the transport's
 * {@code counters()} and {@code connections()}), then refreshes the heartbeat. Scopes are added and closed by user threads;
 * that, the copy and {@link #close()} take this object's lock (never held on a data path). Closing deletes the file.
 *
 * <p>Connections come and go under the bus: the copy thread gives each connection the transport lists a scope of kind
 * {@link CountersFile#KIND_CONNECTION} the first time it sees it and frees that scope's counters on the first copy that no
 * longer lists it. Freed counter ids are reused by Agrona's {@link CountersManager} only after {@code FREE_TO_REUSE_MS}, so a
 * reader that still holds an id never sees it change meaning within that time.
 */
public final class BusCounters implements AutoCloseable {
    /** System property for the directory: a path, or {@value #OFF} for no file. */
    public static final String DIR_PROPERTY = "rdmabus.counters.dir";
    /** The directory setting that turns the file off. */
    public static final String OFF = "off";

    private static final Logger LOG = LoggerFactory.getLogger(BusCounters.class);
    private static final long FREE_TO_REUSE_MS = 1_000;

    private final Path file;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer header;
    private final CountersManager manager;
    private final DistinctErrorLog errorLog;
    private final String busName;
    private final Thread updater;
    // guarded by this
    private final List<Scope> scopes = new ArrayList<>();
    private final Map<String, Integer> transportCounterIds = new HashMap<>();
    private Supplier<Map<String, Long>> transportCounters = Map::of;
    private Supplier<List<ConnectionStats>> transportConnections = List::of;
    /** Connection scopes by the transport's connection id (copy thread, under the lock). */
    private final Long2ObjectHashMap<ConnectionScope> connectionScopes = new Long2ObjectHashMap<>();
    private long copyRound;
    private long nextScopeId = 1;
    private boolean fullWarned;
    private boolean closed;

    /** Fills a scope's values, in the order of its names; called on the updater thread. */
    @FunctionalInterface
    public interface Sampler {
        /** @param values one slot per counter name */
        void sample(long[] values);
    }

    private BusCounters(final Path file, final MappedByteBuffer mapped, final String busName, final String transportName) {
        this.file = file;
        this.mapped = mapped;
        this.busName = busName;
        final int capacity = CountersFile.DEFAULT_CAPACITY;
        final UnsafeBuffer all = new UnsafeBuffer(mapped);
        this.header = new UnsafeBuffer(all, 0, CountersFile.HEADER_LENGTH);
        final UnsafeBuffer metadata = new UnsafeBuffer(all, CountersFile.metadataOffset(), capacity * CountersReader.METADATA_LENGTH);
        final UnsafeBuffer values = new UnsafeBuffer(all, CountersFile.valuesOffset(capacity), capacity * CountersReader.COUNTER_LENGTH);
        this.manager = new CountersManager(metadata, values, StandardCharsets.UTF_8, SystemEpochClock.INSTANCE, FREE_TO_REUSE_MS);
        this.errorLog = new DistinctErrorLog(new UnsafeBuffer(all, CountersFile.errorLogOffset(capacity), CountersFile.DEFAULT_ERROR_LOG_LENGTH),
            SystemEpochClock.INSTANCE, StandardCharsets.UTF_8);
        final long now = System.currentTimeMillis();
        header.putLong(CountersFile.PID_OFFSET, ProcessHandle.current().pid());
        header.putLong(CountersFile.START_TIME_OFFSET, now);
        header.putLong(CountersFile.HEARTBEAT_OFFSET, now);
        header.putInt(CountersFile.CAPACITY_OFFSET, capacity);
        header.putInt(CountersFile.ERROR_LOG_LENGTH_OFFSET, CountersFile.DEFAULT_ERROR_LOG_LENGTH);
        putString(CountersFile.NAME_OFFSET, busName, CountersFile.MAX_NAME_LENGTH);
        putString(CountersFile.TRANSPORT_OFFSET, transportName, CountersFile.MAX_TRANSPORT_LENGTH);
        header.putIntOrdered(CountersFile.VERSION_OFFSET, CountersFile.LAYOUT_VERSION);
        this.updater = new Thread(this::runUpdates, "rdma-bus-counters-" + busName);
        updater.setDaemon(true);
        updater.start();
    }

    private void putString(final int offset, final String value, final int maxBytes) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > maxBytes) {
            bytes = java.util.Arrays.copyOf(bytes, maxBytes);
        }
        header.putInt(offset, bytes.length);
        header.putBytes(offset + Integer.BYTES, bytes);
    }

    /**
     * @param configured the bus's {@code countersDir} setting, or null for the {@value #DIR_PROPERTY} system property, else
     *                   {@link CountersFile#defaultDirectory()}
     * @return the directory, or null when the setting is {@value #OFF}
     */
    public static Path directory(final String configured) {
        final String setting = configured != null ? configured : System.getProperty(DIR_PROPERTY);
        if (setting == null || setting.isBlank()) {
            return CountersFile.defaultDirectory();
        }
        return OFF.equals(setting) ? null : Path.of(setting);
    }

    /**
     * Creates the bus's file in {@code dir} (and the directory, rwxr-xr-x, if missing). The file is rw-r--r--: every user
     * may read it, only the bus's user writes it.
     *
     * @param dir           where
     * @param busName       the bus's name
     * @param transportName its transport's name
     * @return the counters, updating until {@link #close()}
     * @throws BusConfigurationException if the file cannot be created, naming the directory and the setting
     */
    public static BusCounters create(final Path dir, final String busName, final String transportName) {
        final long pid = ProcessHandle.current().pid();
        final int length = CountersFile.fileLength(CountersFile.DEFAULT_CAPACITY, CountersFile.DEFAULT_ERROR_LOG_LENGTH);
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir);
                setPermissions(dir, "rwxr-xr-x");
            }
            for (int attempt = 1; ; attempt++) {
                final String name = CountersFile.fileName(attempt == 1 ? busName : busName + "-" + attempt, pid);
                final Path file = dir.resolve(name);
                try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                    setPermissions(file, "rw-r--r--");
                    final MappedByteBuffer mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, length);
                    return new BusCounters(file, mapped, busName, transportName);
                } catch (final FileAlreadyExistsException ex) {
                    // another bus of this process has the same name: the header carries the real name, the file another
                    continue;
                }
            }
        } catch (final IOException | RuntimeException ex) {
            final BusConfigurationException failure = new BusConfigurationException("countersDir '" + dir + "' (builder countersDir or -D"
                + DIR_PROPERTY + "): cannot create bus " + busName + "'s counters file: " + ex + "; use a writable directory, or '" + OFF + "'");
            failure.initCause(ex);
            throw failure;
        }
    }

    private static void setPermissions(final Path path, final String permissions) throws IOException {
        try {
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(permissions));
        } catch (final UnsupportedOperationException ignored) {
            // not a POSIX file system: its defaults apply
        }
    }

    /** @return the file */
    public Path file() {
        return file;
    }

    /** @param counters the transport's {@code counters()}: a counter is added for each name the first time it appears */
    public synchronized void transportCounters(final Supplier<Map<String, Long>> counters) {
        this.transportCounters = counters;
    }

    /**
     * @param connections the transport's {@code connections()}: each listed connection gets a scope, freed once it is no
     *                    longer listed
     */
    public synchronized void transportConnections(final Supplier<List<ConnectionStats>> connections) {
        this.transportConnections = connections;
    }

    /**
     * Adds a scope's counters to the file (a bus, a subscription, a publication) with value 0; the updater fills them.
     *
     * @param kind    {@link CountersFile#KIND_BUS}, ...
     * @param label   what the scope is, e.g. {@code "subscription md.quotes"}
     * @param names   counter names
     * @param sampler fills the values in the order of {@code names}
     * @return the scope: close it when its subject closes
     */
    public synchronized Scope addScope(final int kind, final String label, final List<String> names, final Sampler sampler) {
        final Scope scope = new Scope(nextScopeId++, label, names.size(), sampler);
        if (closed) {
            return scope;
        }
        for (int i = 0; i < names.size(); i++) {
            scope.counterIds[i] = allocate(kind, scope.id, label, names.get(i));
        }
        scopes.add(scope);
        return scope;
    }

    private int allocate(final int kind, final long scopeId, final String label, final String name) {
        try {
            final byte[] key = name.getBytes(StandardCharsets.UTF_8);
            final int keyLength = Math.min(key.length, CountersReader.MAX_KEY_LENGTH - Integer.BYTES);
            final int id = manager.allocate(label + ": " + name, kind, buffer -> {
                buffer.putInt(0, keyLength);
                buffer.putBytes(Integer.BYTES, key, 0, keyLength);
            });
            manager.setCounterRegistrationId(id, scopeId);
            return id;
        } catch (final IllegalStateException full) {
            if (!fullWarned) {
                fullWarned = true;
                LOG.warn("bus {}: counters file {} is full ({} counters): '{}: {}' and later counters are not in it (Bus.stats() has them)",
                    busName, file, manager.capacity(), label, name);
            }
            return -1;
        }
    }

    /** @param error recorded in the file's distinct error log (a repeat of the same stack trace counts up) */
    public synchronized void recordError(final Throwable error) {
        if (!closed && !errorLog.record(error)) {
            LOG.warn("bus {}: the error log of {} is full; not recorded there: {}", busName, file, error.toString());
        }
    }

    private synchronized void free(final Scope scope) {
        if (closed || !scopes.remove(scope)) {
            return;
        }
        for (final int id : scope.counterIds) {
            if (id >= 0) {
                manager.free(id);
            }
        }
    }

    private void runUpdates() {
        while (update()) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(CountersFile.UPDATE_INTERVAL_MS));
        }
    }

    /** Copies every scope's values and the transport's counters into the file and refreshes the heartbeat. @return false once closed */
    synchronized boolean update() {
        if (closed) {
            return false;
        }
        for (final Scope scope : scopes) {
            try {
                scope.sampler.sample(scope.values);
            } catch (final RuntimeException ex) {
                LOG.warn("bus {}: counters of '{}' not updated: {}", busName, scope.label, ex.toString());
                continue;
            }
            for (int i = 0; i < scope.counterIds.length; i++) {
                if (scope.counterIds[i] >= 0) {
                    manager.setCounterValue(scope.counterIds[i], scope.values[i]);
                }
            }
        }
        for (final Map.Entry<String, Long> e : transportCounters.get().entrySet()) {
            final int id = transportCounterIds.computeIfAbsent(e.getKey(), k -> allocate(CountersFile.KIND_TRANSPORT, 0, "transport", k));
            if (id >= 0) {
                manager.setCounterValue(id, e.getValue());
            }
        }
        updateConnections();
        header.putLongOrdered(CountersFile.HEARTBEAT_OFFSET, System.currentTimeMillis());
        return true;
    }

    /** Adds a scope for each new connection, copies every listed one's values and frees the scopes of the ones gone. */
    private void updateConnections() {
        final List<ConnectionStats> live;
        try {
            live = transportConnections.get();
        } catch (final RuntimeException ex) {
            LOG.warn("bus {}: connection counters not updated: {}", busName, ex.toString());
            return;
        }
        final long round = ++copyRound;
        for (final ConnectionStats connection : live) {
            ConnectionScope scope = connectionScopes.get(connection.id());
            if (scope == null) {
                scope = new ConnectionScope(nextScopeId++, "connection " + connection.peer());
                connectionScopes.put(connection.id(), scope);
            }
            scope.round = round;
            for (final Map.Entry<String, Long> e : connection.counters().entrySet()) {
                final ConnectionScope s = scope;
                final int id = s.counterIds.computeIfAbsent(e.getKey(), k -> allocate(CountersFile.KIND_CONNECTION, s.id, s.label, k));
                if (id >= 0) {
                    manager.setCounterValue(id, e.getValue());
                }
            }
        }
        connectionScopes.values().removeIf(scope -> {
            if (scope.round == round) {
                return false;
            }
            scope.counterIds.values().forEach(id -> {
                if (id >= 0) {
                    manager.free(id);
                }
            });
            return true;
        });
    }

    /** Stops the updater after a last update, deletes the file and unmaps it. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            update();
            closed = true;
        }
        LockSupport.unpark(updater);
        try {
            updater.join(TimeUnit.SECONDS.toMillis(1));
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        try {
            Files.deleteIfExists(file);
        } catch (final IOException ex) {
            LOG.warn("bus {}: counters file {} not deleted: {}", busName, file, ex.toString());
        }
        IoUtil.unmap(mapped);
    }

    /** The counters of one transport connection in the file (copy thread, under the lock). */
    private static final class ConnectionScope {
        private final long id;
        private final String label;
        /** Counter name to its id in the file (-1 if the file was full), in the order they were first listed. */
        private final Map<String, Integer> counterIds = new java.util.LinkedHashMap<>();
        /** The copy that last listed the connection. */
        private long round;

        private ConnectionScope(final long id, final String label) {
            this.id = id;
            this.label = label;
        }
    }

    /** The counters of one subject (a bus, a subscription, a publication) in the file. */
    public final class Scope implements AutoCloseable {
        private final long id;
        private final String label;
        private final int[] counterIds;
        private final long[] values;
        private final Sampler sampler;

        private Scope(final long id, final String label, final int count, final Sampler sampler) {
            this.id = id;
            this.label = label;
            this.counterIds = new int[count];
            java.util.Arrays.fill(counterIds, -1);
            this.values = new long[count];
            this.sampler = sampler;
        }

        /** Frees the scope's counters. Idempotent. */
        @Override
        public void close() {
            free(this);
        }
    }
}
